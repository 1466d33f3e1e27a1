import { parseSpecText } from '/work/wt-openapi/src/openapi/parse.ts';
const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
for (let i = 1; i < 12; i++) bomb.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
for (const t of [bomb.join('\n'), 'x: ' + '['.repeat(100000), 'a: 1\nb: [1,\n', 'a: &x {b: 1}\nc: *x\nd: *x\n', 'a: 1\na: 2', 'd: 2024-01-01\n']) {
  try { console.log(JSON.stringify(parseSpecText(t)).slice(0, 100)); } catch (e) { console.log('ERR', (e as any).message.slice(0, 120), (e as any).line); }
}
