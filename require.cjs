// evalferry is an ES module, which Node.js 20.19 and later load with `require` too (the
// `module-sync` condition of the exports map); an older Node.js lands here to say so.
throw new Error("evalferry is an ES module: `require('evalferry')` needs Node.js 20.19 or later; here load it with `await import('evalferry')`, or `import { convert } from 'evalferry'` in an ES module")
