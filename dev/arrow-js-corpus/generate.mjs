// Writes the Arrow IPC streams of common/src/test/resources/arrow-js-21/ with Arrow JS (the npm
// package apache-arrow, 21.2.0): streams from a writer that is not Arrow Java's, for
// ArrowJsCorpusTest to read with Quiver and with Arrow Java. See README.md for how to run it.
import * as A from 'apache-arrow';
import { mkdirSync, writeFileSync } from 'fs';

const out = process.argv[2];
if (!out) throw new Error('usage: node generate.mjs OUTPUT_FOLDER');
mkdirSync(out, { recursive: true });

function write(name, table) {
  const bytes = A.tableToIPC(table, 'stream');
  writeFileSync(`${out}/${name}.arrow_stream`, bytes);
  console.log(`${name}: ${bytes.length} bytes, ${table.batches.length} batch(es), ` +
    table.schema.fields.map((f) => `${f.name} ${f.type}`).join(', '));
}

const field = (name, type) => new A.Field(name, type, true);
const column = (values, type) => A.vectorFromArray(values, type);

/** A union column: numbers go to child 0 (int), strings to child 1 (utf8). */
function unionColumn(type, values) {
  const builder = A.makeBuilder({
    type,
    nullValues: [null],
    valueToChildTypeId: (_, value) => (typeof value === 'number' ? 0 : 1),
  });
  values.forEach((value) => builder.append(value));
  return builder.finish().toVector();
}

const dictionary = () => new A.Dictionary(new A.Utf8(), new A.Int32(), 7);
const bytes = (...values) => new Uint8Array(values);

write('primitive', A.tableFromArrays({
  i8: column([1, -2, null, 4, 127], new A.Int8()),
  i64: column([1n, -2n, null, 4n, 9007199254740993n], new A.Int64()),
  u32: column([1, 2, 3, null, 4294967295], new A.Uint32()),
  f32: column([1.5, null, -0.25, 3, 4], new A.Float32()),
  f64: column([1.5, 2.25, null, Math.PI, -1e300], new A.Float64()),
  b: column([true, false, null, true, false], new A.Bool()),
  s: column(['a', null, 'ccc', '', 'é€'], new A.Utf8()),
  ls: column(['x', 'yy', null, 'zzz', 'w'], new A.LargeUtf8()),
  bin: column([bytes(1, 2), null, bytes(), bytes(255), bytes(0, 0, 0)], new A.Binary()),
}));
write('temporal', A.tableFromArrays({
  d: column([0, 86400000, null, -86400000, 1e12], new A.DateDay()),
  ts: column([0, 1, null, 1700000000000, -5], new A.TimestampMillisecond()),
  t: column([0, 1000, null, 86399000, 5], new A.TimeMillisecond()),
}));
write('nested', A.tableFromArrays({
  l: column([[1, 2], [], null, [3], [4, 5, 6]], new A.List(field('item', new A.Int32()))),
  st: column(
    [{ a: 1, b: 'x' }, { a: 2, b: null }, null, { a: 4, b: 'w' }, { a: 5, b: 'v' }],
    new A.Struct([field('a', new A.Int32()), field('b', new A.Utf8())])),
  fsl: column([[1, 2], [3, 4], null, [5, 6], [7, 8]],
    new A.FixedSizeList(2, field('item', new A.Int16()))),
}));
write('two_batches', A.tableFromArrays({
  k: column([1n, 2n, 3n], new A.Int64()), s: column(['a', 'b', null], new A.Utf8()),
}).concat(A.tableFromArrays({
  k: column([4n, null], new A.Int64()), s: column(['dd', 'eee'], new A.Utf8()),
})));
write('dictionary', A.tableFromArrays({ d: column(['a', 'b', 'a', null, 'c'], dictionary()) }));
// The second batch's dictionary starts with the first's values; Arrow JS still writes it as a
// replacement, not a delta.
write('dictionary_extended', A.tableFromArrays({ d: column(['a', 'b', 'a'], dictionary()) })
  .concat(A.tableFromArrays({ d: column(['a', 'b', 'c', 'c'], dictionary()) })));
// The second batch's dictionary does not: Arrow JS writes a replacement.
write('dictionary_replaced', A.tableFromArrays({ d: column(['a', 'b', 'a'], dictionary()) })
  .concat(A.tableFromArrays({ d: column(['x', 'y'], dictionary()) })));
write('views', A.tableFromArrays({
  sv: column(['short', null, 'a string longer than twelve bytes', '', 'another long string!'],
    new A.Utf8View()),
  bv: column([bytes(1, 2), null, new Uint8Array(20).fill(7), bytes(), bytes(9)], new A.BinaryView()),
}));
const unionChildren = [field('i', new A.Int32()), field('s', new A.Utf8())];
write('dense_union', new A.Table({
  u: unionColumn(new A.DenseUnion([0, 1], unionChildren), [1, 'a', 2, 'bb', 'c']),
}));
write('sparse_union', new A.Table({
  u: unionColumn(new A.SparseUnion([0, 1], unionChildren), [1, 'a', 2, 'bb', 3]),
}));
