const fs=require('fs');const p=JSON.parse(fs.readFileSync(process.argv[2]));const ops=Number(process.argv[3]);const top=Number(process.argv[4]||60);
const byId=new Map(p.nodes.map(n=>[n.id,n]));const parent=new Map();for(const n of p.nodes)for(const c of n.children||[])parent.set(c,n.id);
const self=new Map();let at=p.startTime;for(let i=0;i<p.samples.length;i++){const d=p.timeDeltas[i]||0;self.set(p.samples[i],(self.get(p.samples[i])||0)+d);}
const fself=new Map(), fincl=new Map();let busy=0;
for(const [id,t] of self){const n=byId.get(id);const cf=n.callFrame;if(cf.functionName==='(idle)')continue;busy+=t;const k=`${cf.functionName} ${cf.url.replace(/.*\/(src|node_modules)\//,'$1/')}:${cf.lineNumber}`;fself.set(k,(fself.get(k)||0)+t);
 const seen=new Set();let x=id;while(x!==undefined){const m=byId.get(x).callFrame;const kk=`${m.functionName} ${m.url.replace(/.*\/(src|node_modules)\//,'$1/')}:${m.lineNumber}`;if(!seen.has(kk)){seen.add(kk);fincl.set(kk,(fincl.get(kk)||0)+t);}x=parent.get(x);}}
console.log('busy µs/op',(busy/ops).toFixed(1));
const mode=process.argv[5]||'self';const m=mode==='self'?fself:fincl;
for(const [k,t] of [...m].sort((a,b)=>b[1]-a[1]).slice(0,top))console.log((t/ops).toFixed(2).padStart(7),k);
