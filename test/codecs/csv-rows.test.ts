import { test } from 'node:test'
import assert from 'node:assert/strict'
import Papa from 'papaparse'
import { parseRows, RowEnds } from '../../src/codecs/csv.ts'

interface CoreParser {
  parse(input: string, baseIndex: number, ignoreLastRow: boolean): Papa.ParseResult<string[]>
}

/** A seeded generator of numbers in [0, 1), so that a failure names a text that can be made again. */
function random(seed: number): () => number {
  let state = seed
  return () => (state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
}

/**
 * Texts of a few rows of quoted and plain cells, with quotes doubled, stray and unclosed, row ends of
 * each kind and the text cut anywhere, as `RowEnds` hands them on, chunk by chunk.
 */
function texts(count: number, delimiter: string, seed: number): string[] {
  const rnd = random(seed)
  const pick = <T>(items: T[]): T => items[Math.floor(rnd() * items.length)]!
  const quotedChars = ['a', 'b', delimiter, '"', '\n', '\r', ' ', 'é', '🚀']
  const plainChars = ['a', 'b', ' ', 'é', '"', '🚀']
  const cell = (): string => {
    const length = Math.floor(rnd() * 6)
    if (rnd() < 0.4) return '"' + Array.from({ length }, () => pick(quotedChars).replace('"', '""')).join('') + (rnd() < 0.1 ? 'x"' : '"')
    return Array.from({ length }, () => pick(plainChars)).join('')
  }
  const out: string[] = []
  for (let i = 0; i < count; i++) {
    let text = ''
    const rows = Math.floor(rnd() * 4)
    for (let r = 0; r < rows; r++) {
      text += Array.from({ length: 1 + Math.floor(rnd() * 3) }, cell).join(delimiter)
      if (r < rows - 1 || rnd() < 0.5) text += pick(['\n', '\r\n', '\r'])
    }
    if (rnd() < 0.3) text = text.slice(0, Math.floor(rnd() * (text.length + 1)))
    if (rnd() < 0.05) text += '"open'
    const ends = new RowEnds(delimiter)
    const cut = Math.floor(rnd() * (text.length + 1))
    out.push(ends.push(text.slice(0, cut)) + ends.push(text.slice(cut)) + ends.end())
  }
  return out
}

/** The LFs of `text` before `end`. */
function newlines(text: string, end: number): number {
  return text.slice(0, end).split('\n').length - 1
}

test('rows are read from every text as papaparse reads them: cells, the unfinished last row, and the first quoting fault; each row\'s line is counted', () => {
  for (const [k, delimiter] of [',', ';', '\t', '|'].entries()) {
    const papa = new (Papa as unknown as { Parser: new (config: object) => CoreParser }).Parser({ delimiter, newline: '\n', quoteChar: '"' })
    let faults = 0
    let unfinished = 0
    for (const text of texts(20_000, delimiter, 7 + k)) {
      for (const more of [false, true]) {
        const theirs = papa.parse(text, 0, more)
        const ours = parseRows(text, delimiter.charCodeAt(0), more)
        const where = `${JSON.stringify(text)}, ${more ? 'more to come' : 'at the end'}`
        assert.deepEqual(ours.rows, theirs.data, where)
        assert.equal(ours.cursor, more ? theirs.meta.cursor : text.length, where)
        const fault = theirs.errors[0]
        assert.deepEqual(ours.fault, fault ? { row: fault.row, unclosed: fault.code === 'MissingQuotes' } : undefined, where)
        // A row's line: one for each row before it, and one more for each newline of its cells.
        let line = 0
        const expected = [0]
        for (const row of ours.rows) expected.push((line += 1 + row.join('').split('\n').length - 1))
        expected[ours.rows.length] = newlines(text, ours.cursor)
        assert.deepEqual(ours.lines, expected, where)
        if (fault) faults++
        if (more && ours.cursor < text.length) unfinished++
      }
    }
    // The texts reach both kinds of end and faults.
    assert.ok(faults > 100 && unfinished > 1000, `${faults} faults, ${unfinished} unfinished rows`)
  }
})
