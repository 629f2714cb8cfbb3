import { read, convert } from 'evalferry'

for await (const c of read('examples/goldens.json', { from: 'deepeval' })) {
  console.log(c.name, c.input?.[0]?.content)
}
const report = await convert({ input: 'examples/goldens.json', output: 'out/cases.yaml', to: 'evalcase' })
console.log(report.records) // { read: 3, written: 3, skipped: 0 }
