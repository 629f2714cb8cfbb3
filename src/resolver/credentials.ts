/**
 * Tokens from the environment (SPEC 6), turned into HTTP headers for one host: for git (handed over
 * as `http.<url>.extraHeader` in the environment, see cache/git.ts) and for the single-file APIs.
 */

import type { HostConfig } from './hosts.ts'

export interface Credential {
  /** `Name: value` headers for git. */
  gitHeaders: string[]
  /** Headers for the single-file API. */
  rawHeaders: Record<string, string>
  /** The secret strings, so that no message ever shows them. */
  secrets: string[]
  /** The variable(s) the token came from, for messages. */
  source: string
}

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`

function first(env: NodeJS.ProcessEnv, ...names: string[]): [string, string] | undefined {
  for (const name of names) {
    const value = env[name]?.trim()
    if (value) return [name, value]
  }
  return undefined
}

/**
 * The credential for a host, or undefined when the environment holds none for it. A token goes only
 * to its own host or to one the user configured (`--host`, `EVALFERRY_HOSTS`), never to a host that
 * only a dataset named.
 */
export function credentialFor(host: HostConfig, env: NodeJS.ProcessEnv = process.env): Credential | undefined {
  if (host.guessed) return undefined
  switch (host.type) {
    case 'github': {
      const found = host.name === 'github.com' ? first(env, 'GH_TOKEN', 'GITHUB_TOKEN') : first(env, 'GH_ENTERPRISE_TOKEN', 'GITHUB_ENTERPRISE_TOKEN')
      if (!found) return undefined
      const [source, token] = found
      return { gitHeaders: [`Authorization: ${basic('x-access-token', token)}`], rawHeaders: { authorization: `Bearer ${token}` }, secrets: [token], source }
    }
    case 'gitlab': {
      const found = first(env, 'GITLAB_TOKEN')
      if (!found) return undefined
      const [source, token] = found
      return { gitHeaders: [`Authorization: ${basic('oauth2', token)}`], rawHeaders: { 'private-token': token }, secrets: [token], source }
    }
    case 'bitbucket': {
      const email = env.BITBUCKET_EMAIL?.trim()
      const apiToken = env.BITBUCKET_API_TOKEN?.trim()
      if (email && apiToken) {
        return {
          gitHeaders: [`Authorization: ${basic('x-bitbucket-api-token-auth', apiToken)}`],
          rawHeaders: { authorization: basic(email, apiToken) },
          secrets: [apiToken],
          source: 'BITBUCKET_EMAIL + BITBUCKET_API_TOKEN',
        }
      }
      const found = first(env, 'BITBUCKET_TOKEN')
      if (!found) return undefined
      const [source, token] = found
      return { gitHeaders: [`Authorization: ${basic('x-token-auth', token)}`], rawHeaders: { authorization: `Bearer ${token}` }, secrets: [token], source }
    }
    case 'bitbucket-server': {
      const found = first(env, 'BITBUCKET_TOKEN')
      if (!found) return undefined
      const [source, token] = found
      return { gitHeaders: [`Authorization: Bearer ${token}`], rawHeaders: { authorization: `Bearer ${token}` }, secrets: [token], source }
    }
  }
}
