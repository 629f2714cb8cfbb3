// evalferry is an ES module; `require('evalferry')` lands here to say so.
throw new Error("evalferry is an ES module: load it with `import { convert } from 'evalferry'`, or from CommonJS with `await import('evalferry')`")
