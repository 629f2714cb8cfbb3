/**
 * The stand-ins checked against the services' official clients (the `langsmith` npm client and
 * `@huggingface/hub`, from compat/): each reads back what evalferry pushed, as the same records,
 * and evalferry reads back what the client pushed.
 */
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { convert } from '../../src/index.ts'
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { COMPAT_PYTHON, judgedBy, runInCompatAsync } from '../helpers/compat.ts'
import { CdnStandIn, HubStandIn } from '../helpers/services/hub-server.ts'
import { LangSmithStandIn } from '../helpers/services/langsmith-server.ts'
import { tempDir } from '../helpers/temp.ts'

const dir = tempDir('evalferry-clients-')
/** Runs `check` against a Hub stand-in and its LFS origin, stopped after. */
async function withHub(check: (hub: HubStandIn, env: NodeJS.ProcessEnv) => Promise<void>): Promise<void> {
  const cdn = await new CdnStandIn().start('127.0.0.2')
  const hub = await new HubStandIn(cdn).start()
  try {
    await check(hub, { HF_TOKEN: hub.token, HF_ENDPOINT: hub.url, EVALFERRY_CACHE_DIR: join(dir, `cache-${hub.url.split(':').pop()}`) })
  } finally {
    await hub.stop()
    await cdn.stop()
  }
}

/** Runs `check` against a LangSmith stand-in, stopped after. */
async function withLangSmith(check: (server: LangSmithStandIn, env: NodeJS.ProcessEnv) => Promise<void>): Promise<void> {
  const server = await new LangSmithStandIn().start()
  try {
    await check(server, { LANGSMITH_API_KEY: server.apiKey, LANGSMITH_ENDPOINT: server.url })
  } finally {
    await server.stop()
  }
}

const jsonLines = (path: string): Record<string, unknown>[] => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>)

describe('the langsmith client', () => {
  test('reads what evalferry pushed, and evalferry reads what it pushed', judgedBy('langsmith'), async () => {
    await withLangSmith(async (server, env) => {
      const input = join(import.meta.dirname, '..', 'fixtures', 'langsmith', 'kv.jsonl')
      await convert({ input, output: 'langsmith://by-evalferry', from: 'langsmith', to: 'langsmith', env })
      const read = await runInCompatAsync<{ inputs: unknown; outputs: unknown; split: unknown }[]>(
        `import { Client } from 'langsmith'
         const client = new Client({ apiUrl: process.argv[1], apiKey: process.argv[2] })
         const out = []
         for await (const e of client.listExamples({ datasetName: 'by-evalferry' })) out.push({ inputs: e.inputs, outputs: e.outputs, split: e.metadata.dataset_split })
         result(out)`,
        [server.url, server.apiKey],
      )
      assert.deepEqual(
        read,
        jsonLines(input).map((r) => ({ inputs: r.inputs, outputs: r.outputs, split: (r.metadata as { dataset_split?: unknown }).dataset_split ?? ['base'] })),
      )
      await runInCompatAsync(
        `import { Client } from 'langsmith'
         const client = new Client({ apiUrl: process.argv[1], apiKey: process.argv[2] })
         const dataset = await client.createDataset('by-client', { dataType: 'kv' })
         await client.createExamples([
           { inputs: { question: 'What is 2 + 2?' }, outputs: { answer: '4' }, metadata: { level: 1 }, split: 'test', dataset_id: dataset.id },
           { inputs: { question: 'Capital of Peru?' }, outputs: { answer: 'Lima' }, dataset_id: dataset.id },
         ])
         result(dataset.id)`,
        [server.url, server.apiKey],
      )
      const back = join(dir, 'by-client.jsonl')
      await convert({ input: 'langsmith://by-client', output: back, to: 'langsmith', env })
      assert.deepEqual(
        jsonLines(back).map(({ id: _id, ...r }) => r),
        [
          { inputs: { question: 'What is 2 + 2?' }, outputs: { answer: '4' }, metadata: { level: 1, dataset_split: ['test'] } },
          { inputs: { question: 'Capital of Peru?' }, outputs: { answer: 'Lima' }, metadata: { dataset_split: ['base'] } },
        ],
      )
    })
  })
})

describe('@huggingface/hub', () => {
  test('reads what evalferry pushed, and evalferry reads what it uploaded', judgedBy('@huggingface/hub'), async () => {
    await withHub(async (hub, env) => {
      const input = join(dir, 'rows.jsonl')
      writeFileSync(input, '{"question":"q1","answer":"a1"}\n{"question":"q2","answer":"a2"}\n')
      await convert({ input, output: 'hf://datasets/acme/by-evalferry', from: 'hf', to: 'hf', env })
      const listed = await runInCompatAsync<{ files: string[]; card: string; parquetBytes: number }>(
        `import { listFiles, downloadFile } from '@huggingface/hub'
         const [hubUrl, accessToken] = process.argv.slice(1)
         const repo = { type: 'dataset', name: 'acme/by-evalferry' }
         const files = []
         for await (const f of listFiles({ repo, hubUrl, accessToken, recursive: true })) if (f.type === 'file') files.push(f.path)
         const card = await (await downloadFile({ repo, path: 'README.md', hubUrl, accessToken })).text()
         const parquet = await downloadFile({ repo, path: 'data/train-00000-of-00001.parquet', hubUrl, accessToken })
         result({ files: files.sort(), card, parquetBytes: (await parquet.arrayBuffer()).byteLength })`,
        [hub.url, hub.token],
      )
      assert.deepEqual(listed.files, ['.gitattributes', 'README.md', 'data/train-00000-of-00001.parquet'])
      assert.match(listed.card, /path: data\/train-\*/)
      assert.equal(listed.parquetBytes, hub.filesOf('acme/by-evalferry').get('data/train-00000-of-00001.parquet')!.length)
      await runInCompatAsync(
        `import { createRepo, uploadFiles } from '@huggingface/hub'
         const [hubUrl, accessToken] = process.argv.slice(1)
         const repo = { type: 'dataset', name: 'acme/by-client' }
         await createRepo({ repo, hubUrl, accessToken })
         await uploadFiles({ repo, hubUrl, accessToken, useXet: false, files: [{ path: 'data/test.jsonl', content: new Blob(['{"question":"q9","answer":"a9"}\\n']) }] })
         result(true)`,
        [hub.url, hub.token],
      )
      const back = join(dir, 'by-client.jsonl')
      await convert({ input: 'hf://datasets/acme/by-client/default/test', output: back, to: 'hf', env })
      assert.deepEqual(jsonLines(back), [{ question: 'q9', answer: 'a9' }])
    })
  })
})

/** What a Python script prints, run by compat's Python with `env` (not offline: it talks to a stand-in), without blocking this process. */
function python(script: string, env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(COMPAT_PYTHON, ['-c', script], { env: { PATH: process.env.PATH, HOME: dir, HF_HUB_DISABLE_TELEMETRY: '1', ...env } })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
  return new Promise((resolve, reject) => child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`python failed (${code}):\n${stderr}`)))))
}

describe('Python huggingface_hub and langsmith', () => {
  test('huggingface_hub downloads what evalferry pushed, and evalferry reads what it committed', judgedBy('python'), async () => {
    await withHub(async (hub, env) => {
      const input = join(dir, 'py-rows.jsonl')
      writeFileSync(input, '{"question":"q1","answer":"a1"}\n{"question":"q2","answer":"a2"}\n')
      await convert({ input, output: 'hf://datasets/acme/py-by-evalferry/default/test', from: 'hf', to: 'hf', env })
      const read = await python(
        `import json, pyarrow.parquet as pq
from huggingface_hub import HfApi, hf_hub_download
api = HfApi()
files = sorted(api.list_repo_files('acme/py-by-evalferry', repo_type='dataset'))
path = hf_hub_download('acme/py-by-evalferry', 'data/test-00000-of-00001.parquet', repo_type='dataset', cache_dir='${join(dir, 'py-hf-cache')}')
print(json.dumps({'files': files, 'rows': pq.read_table(path).to_pylist()}))`,
        env,
      )
      assert.deepEqual(JSON.parse(read), { files: ['.gitattributes', 'README.md', 'data/test-00000-of-00001.parquet'], rows: [{ question: 'q1', answer: 'a1' }, { question: 'q2', answer: 'a2' }] })
      await python(
        `from huggingface_hub import HfApi, CommitOperationAdd
api = HfApi()
api.create_repo('acme/py-by-client', repo_type='dataset')
api.create_commit('acme/py-by-client', repo_type='dataset', commit_message='rows', operations=[CommitOperationAdd('data/validation.jsonl', b'{"question": "q7", "answer": "a7"}\\n')])`,
        env,
      )
      const back = join(dir, 'py-by-client.jsonl')
      await convert({ input: 'hf://datasets/acme/py-by-client/default/validation', output: back, to: 'hf', env })
      assert.deepEqual(jsonLines(back), [{ question: 'q7', answer: 'a7' }])
    })
  })

  test("datasets reads the card's configs and the shards of a push as its own, and huggingface_hub uploads in the stand-in's parts", judgedBy('python'), async () => {
    await withHub(async (hub, env) => {
      const input = join(dir, 'py-shards.jsonl')
      writeFileSync(input, Array.from({ length: 3000 }, (_, i) => JSON.stringify({ question: `question ${i}`, answer: `answer ${i * 3}` })).join('\n') + '\n')
      hub.multipart = { fromBytes: 1000, chunkSize: 4096 }
      await convert({ input, output: 'hf://datasets/acme/py-shards/main/test', from: 'hf', to: 'hf', env: { ...env, EVALFERRY_HF_SHARD_BYTES: '8000' } })
      const shards = [...hub.filesOf('acme/py-shards').keys()].filter((p) => p.endsWith('.parquet'))
      assert.ok(shards.length >= 2, shards.join(', '))
      // datasets' own reading of the card (MetadataConfigs), its patterns resolved in the downloaded repository, the shards loaded as one split.
      const read = await python(
        `import glob, json, os
from huggingface_hub import snapshot_download, DatasetCard
from datasets import load_dataset
from datasets.utils.metadata import MetadataConfigs
root = snapshot_download('acme/py-shards', repo_type='dataset', cache_dir='${join(dir, 'py-shards-cache')}')
configs = MetadataConfigs.from_dataset_card_data(DatasetCard.load(os.path.join(root, 'README.md')).data)
files = {e['split']: sorted(glob.glob(os.path.join(root, e['path']))) for e in configs['main']['data_files']}
split = load_dataset('parquet', data_files=files, cache_dir='${join(dir, 'py-datasets-cache')}')['test']
print(json.dumps({'configs': sorted(configs), 'files': {k: len(v) for k, v in files.items()}, 'rows': split.num_rows, 'first': split[0], 'last': split[-1]}))`,
        env,
      )
      assert.deepEqual(JSON.parse(read), { configs: ['main'], files: { test: shards.length }, rows: 3000, first: { question: 'question 0', answer: 'answer 0' }, last: { question: 'question 2999', answer: 'answer 8997' } })
      // The official client's multipart upload, against the stand-in's: evalferry reads what it stored.
      hub.reset()
      await python(
        `import hashlib, io, pyarrow as pa, pyarrow.parquet as pq
from huggingface_hub import HfApi
api = HfApi()
api.create_repo('acme/py-multipart', repo_type='dataset')
table = pa.table({'question': [hashlib.sha256(str(i).encode()).hexdigest() for i in range(200)], 'answer': ['a%d' % i for i in range(200)]})
buffer = io.BytesIO()
pq.write_table(table, buffer)
api.upload_file(path_or_fileobj=buffer.getvalue(), path_in_repo='data/test-00000-of-00001.parquet', repo_id='acme/py-multipart', repo_type='dataset')`,
        { ...env, HF_HUB_DISABLE_XET: '1' },
      )
      assert.ok(hub.count('POST /api/complete_multipart') >= 1, hub.log.map((r) => r.route).join(', '))
      const back = join(dir, 'py-multipart.jsonl')
      await convert({ input: 'hf://datasets/acme/py-multipart/default/test', output: back, to: 'hf', env })
      assert.deepEqual(jsonLines(back), Array.from({ length: 200 }, (_, i) => ({ question: createHash('sha256').update(String(i)).digest('hex'), answer: `a${i}` })))
      assert.ok(hub.cdn.log.filter((r) => r.route === 'PUT /parts/{oid}/{part}').length >= 2)
    })
  })

  test('langsmith lists what evalferry pushed, and evalferry reads what it created', judgedBy('python'), async () => {
    await withLangSmith(async (server, env) => {
      const input = join(import.meta.dirname, '..', 'fixtures', 'langsmith', 'kv.jsonl')
      await convert({ input, output: 'langsmith://py-by-evalferry', from: 'langsmith', to: 'langsmith', env })
      const read = await python(
        `import json
from langsmith import Client
client = Client()
print(json.dumps([{'inputs': e.inputs, 'outputs': e.outputs} for e in client.list_examples(dataset_name='py-by-evalferry')]))`,
        env,
      )
      assert.deepEqual(JSON.parse(read), jsonLines(input).map((r) => ({ inputs: r.inputs, outputs: r.outputs })))
      await python(
        `from langsmith import Client
client = Client()
dataset = client.create_dataset('py-by-client')
client.create_examples(dataset_id=dataset.id, examples=[{'inputs': {'question': 'Largest ocean?'}, 'outputs': {'answer': 'Pacific'}, 'split': 'test'}])`,
        env,
      )
      const back = join(dir, 'py-by-client.jsonl')
      await convert({ input: 'langsmith://py-by-client', output: back, to: 'langsmith', env })
      assert.deepEqual(jsonLines(back).map(({ id: _id, ...r }) => r), [{ inputs: { question: 'Largest ocean?' }, outputs: { answer: 'Pacific' }, metadata: { dataset_split: ['test'] } }])
    })
  })
})
