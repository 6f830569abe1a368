/**
 * Writes docs/FLAGS.md from the flag table in src/server/flags.ts, the one `--help` prints, so
 * the reference cannot drift from the flags the server takes:
 *
 *   node -r @swc-node/register tools/flags-doc.ts           # write docs/FLAGS.md
 *   node -r @swc-node/register tools/flags-doc.ts --check   # exit 1 if it is not current
 *
 * test/server/flags.test.ts fails while the page is not current. A flag's text lives in its
 * `usage` (help and this page) and `docs` (this page only: the pages that explain it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type FlagDoc, flagDocs } from '../src/server/flags';

export const FLAGS_DOC_PATH = path.join(__dirname, '..', 'docs', 'FLAGS.md');

/** Headings, each before the flag (in help order) that opens its part of the table. */
const SECTIONS: ReadonlyArray<readonly [first: string, title: string]> = [
  ['bind-address', 'Serving, the store and the naming profile'],
  ['core-address', 'Controllers, the scheduler and the simulated nodes'],
  ['runtime-config', 'APIs and features'],
  ['etcd-compaction-interval', 'Compaction, limits and logs'],
  ['audit-policy-file', 'Audit'],
  ['shutdown-delay-duration', 'Shutdown, timeouts and the watch cache'],
  ['anonymous-auth', 'Authentication'],
  ['enable-admission-plugins', 'Admission'],
  ['authorization-mode', 'Authorization'],
  ['grpc-bind-address', 'The gRPC door'],
];

const HEAD = `# Flags

<!-- Written by tools/flags-doc.ts from src/server/flags.ts; edit the flags there, then run
     node -r @swc-node/register tools/flags-doc.ts -->

Keelson's flags keep kube-apiserver's names (and kube-controller-manager's, for the controllers
it runs), plus \`--data-dir\`, \`--vendor\`, \`--core-address\`, \`--controllers-only\`, \`--core-only\`
and \`--simulated-nodes\`. Each is given as \`--flag value\` or \`--flag=value\`; a boolean also as a
bare \`--flag\`. \`npm start -- --help\` prints the same table.

This page is generated from the flag definitions (\`src/server/flags.ts\`) by
\`tools/flags-doc.ts\`, and a test fails while it is not current: change a flag's text there,
not here.
`;

/** Markdown for text that is plain prose: flag names as code, HTML and table syntax escaped. */
function cell(text: string, names: ReadonlySet<string>): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => {
      if (i % 2 === 1) return part.replace(/\|/g, '\\|');
      return part
        .replace(/[\\*_|<]/g, (c) => (c === '<' ? '&lt;' : `\\${c}`))
        .replace(/(^|[\s(])(--[a-z](?:[a-z0-9-]*[a-z0-9])?(?:-\\\*)?)/g, (_, before: string, flag: string) => {
          const bare = flag.replace(/\\\*$/, '*');
          return names.has(bare.slice(2)) || bare.endsWith('*') ? `${before}\`${bare}\`` : `${before}${flag}`;
        });
    })
    .join('');
}

function row(f: FlagDoc, names: ReadonlySet<string>): string {
  const name = `\`${f.spelling}\`${f.type === 'bool' ? '' : ` ${f.type}`}`;
  const shown = f.shownDefault === '' ? '' : `\`${f.shownDefault.replace(/\|/g, '\\|')}\``;
  const meaning = cell(f.usage, names) + (f.docs ? ` ${cell(f.docs, names)}` : '');
  return `| ${name} | ${shown} | ${meaning} |`;
}

export function flagsMarkdown(): string {
  const flags = flagDocs();
  const names = new Set(flags.map((f) => f.name));
  const titles = new Map(SECTIONS);
  for (const [first] of SECTIONS) if (!names.has(first)) throw new Error(`tools/flags-doc.ts: no flag --${first} opens a section`);
  if (!titles.has(flags[0]!.name)) throw new Error(`tools/flags-doc.ts: the first flag, --${flags[0]!.name}, opens no section`);
  const lines = [HEAD.trimEnd()];
  for (const f of flags) {
    const title = titles.get(f.name);
    if (title !== undefined) lines.push('', `## ${title}`, '', '| Flag | Default | Meaning |', '|---|---|---|');
    lines.push(row(f, names));
  }
  return `${lines.join('\n')}\n`;
}

if (require.main === module) {
  const text = flagsMarkdown();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(FLAGS_DOC_PATH, 'utf8');
    } catch {
      // missing: not current
    }
    if (current !== text) {
      process.stderr.write('docs/FLAGS.md is not current: run node -r @swc-node/register tools/flags-doc.ts\n');
      process.exit(1);
    }
  } else {
    writeFileSync(FLAGS_DOC_PATH, text);
  }
}
