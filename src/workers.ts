/** Worker threads of the batch and of files converted in parts: starting one, and asking it for a reply. */
import { Worker, type ResourceLimits } from 'node:worker_threads'

/**
 * A worker running the module `name` (`batch-worker`, `parallel-worker`) beside this one: its
 * compiled JavaScript, or, from the TypeScript sources (tests, development), the source with tsx
 * registered in the worker first.
 */
export function startWorker(name: string, resourceLimits?: ResourceLimits): Worker {
  const limits = resourceLimits ? { resourceLimits } : {}
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, import.meta.url), limits)
  const url = new URL(`./${name}.ts`, import.meta.url).href
  return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url)}) })`, { eval: true, ...limits })
}

/**
 * Posts `message` to `worker` and resolves with the first reply that `answer` takes (returns other
 * than undefined for); rejects when the worker fails or exits first.
 */
export function ask<R, T>(worker: Worker, message: unknown, answer: (reply: R) => T | undefined): Promise<T> {
  return new Promise((resolve, reject) => {
    const settle = (): void => {
      worker.off('message', onMessage)
      worker.off('error', onError)
      worker.off('exit', onExit)
    }
    const onMessage = (reply: R): void => {
      const taken = answer(reply)
      if (taken === undefined) return
      settle()
      resolve(taken)
    }
    const onError = (error: Error): void => {
      settle()
      reject(error)
    }
    const onExit = (code: number): void => {
      settle()
      reject(new Error(`a worker exited (code ${code}) before it answered`))
    }
    worker.on('message', onMessage)
    worker.on('error', onError)
    worker.on('exit', onExit)
    worker.postMessage(message)
  })
}
