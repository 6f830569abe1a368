#!/bin/bash
cd /work/main
for r in base head head base; do
  if [ $r = base ]; then npm run bench -- --quick --only 1 --rev 3c84689 > scratch/ab2/ab-$r-$(date +%s).md 2>/dev/null; else npm run bench -- --quick --only 1 --rev HEAD > scratch/ab-$r-$(date +%s).md 2>/dev/null; fi
done
echo finished > scratch/ab2/done
