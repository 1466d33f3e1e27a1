/**
 * The embedded database's statement cache (src/platform/db/pglite-dialect.ts): statements are
 * prepared once per SQL text and then run by name. These tests hold it to what a fresh parse of
 * every statement gives: the same rows and types, the same errors, a session that keeps working
 * after an error, a schema change seen at once, and a bounded number of prepared statements.
 *
 * They open the embedded database whichever engine the suite runs on: the cache exists only there.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { MEMORY_DATA_DIR } from '../src/platform/config.ts';
import { openDatabase, type DatabaseHandle } from '../src/platform/db/database.ts';

let handle: DatabaseHandle;
before(async () => {
  handle = await openDatabase({ databaseUrl: undefined, dataDir: MEMORY_DATA_DIR }, 'test');
  await sql`CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL, tags text[], meta jsonb, at timestamptz, big int8)`.execute(handle.db);
});
after(async () => {
  await handle?.close();
});

const preparedCount = async () =>
  Number((await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_prepared_statements`.execute(handle.db)).rows[0]!.n);

test('a statement run again by name gives the same rows and types as its first run, parameters of every kind included', async () => {
  const at = new Date('2026-01-02T03:04:05.678Z');
  await handle.db
    .insertInto('notes' as never)
    .values({ id: 1, body: 'one', tags: ['a', 'b'], meta: JSON.stringify({ k: [1, 2] }), at, big: 9007199254740991 } as never)
    .execute();
  await handle.db.insertInto('notes' as never).values({ id: 2, body: 'two', tags: null, meta: null, at: null, big: null } as never).execute();
  const read = (id: number) => sql<Record<string, unknown>>`SELECT * FROM notes WHERE id = ${id}`.execute(handle.db);
  const first = await read(1);
  for (let i = 0; i < 5; i++) assert.deepEqual((await read(1)).rows, first.rows);
  assert.deepEqual(first.rows, [{ id: 1, body: 'one', tags: ['a', 'b'], meta: { k: [1, 2] }, at, big: 9007199254740991 }]);
  assert.deepEqual((await read(2)).rows, [{ id: 2, body: 'two', tags: null, meta: null, at: null, big: null }]);
  // An array parameter and a parameterless query go through the cache too.
  const byTags = await sql<{ id: number }>`SELECT id FROM notes WHERE tags && ${['b', 'z']}::text[]`.execute(handle.db);
  assert.deepEqual(byTags.rows, [{ id: 1 }]);
  const all = await sql<{ n: number }>`SELECT count(*)::int AS n FROM notes`.execute(handle.db);
  assert.deepEqual(all.rows, [{ n: 2 }]);
  // Writes report the rows they touched.
  const updated = await handle.db.updateTable('notes' as never).set({ body: 'uno' } as never).where('id' as never, '=', 1 as never).executeTakeFirst();
  assert.equal(updated.numUpdatedRows, 1n);
  assert.equal((await read(1)).rows[0]!.body, 'uno');
});

test('a refused statement answers its error and leaves the session working, in and out of transactions', async () => {
  await assert.rejects(sql`SELEC ${1}`.execute(handle.db), (err: Error & { code?: string }) => err.code === '42601');
  await assert.rejects(
    sql`INSERT INTO notes (id, body) VALUES (${1}, ${'again'})`.execute(handle.db),
    (err: Error & { code?: string }) => err.code === '23505',
  );
  await assert.rejects(
    handle.db.transaction().execute(async (trx) => {
      await sql`INSERT INTO notes (id, body) VALUES (${10}, ${'ten'})`.execute(trx);
      await sql`INSERT INTO notes (id, body) VALUES (${1}, ${'duplicate'})`.execute(trx);
    }),
    (err: Error & { code?: string }) => err.code === '23505',
  );
  // The transaction rolled back whole, and the same statements work afterwards.
  assert.deepEqual((await sql`SELECT id FROM notes WHERE id = ${10}`.execute(handle.db)).rows, []);
  await sql`INSERT INTO notes (id, body) VALUES (${10}, ${'ten'})`.execute(handle.db);
  assert.deepEqual((await sql`SELECT body FROM notes WHERE id = ${10}`.execute(handle.db)).rows, [{ body: 'ten' }]);
});

test('after the schema changes, a cached statement returns the new shape', async () => {
  const read = () => sql<Record<string, unknown>>`SELECT * FROM notes WHERE id = ${2}`.execute(handle.db);
  assert.equal('extra' in (await read()).rows[0]!, false);
  await sql`ALTER TABLE notes ADD COLUMN extra text DEFAULT 'x'`.execute(handle.db);
  assert.equal((await read()).rows[0]!.extra, 'x');
  await sql`ALTER TABLE notes DROP COLUMN extra`.execute(handle.db);
  assert.equal('extra' in (await read()).rows[0]!, false);
});

test('concurrent queries and transactions each get their own answers', async () => {
  const results = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      i % 4 === 0
        ? handle.db.transaction().execute(async (trx) => {
            await sql`INSERT INTO notes (id, body) VALUES (${100 + i}, ${`n${i}`})`.execute(trx);
            return (await sql<{ body: string }>`SELECT body FROM notes WHERE id = ${100 + i}`.execute(trx)).rows[0]!.body;
          })
        : sql<{ v: string }>`SELECT ${`v${i}`}::text AS v`.execute(handle.db).then((r) => r.rows[0]!.v),
    ),
  );
  assert.deepEqual(
    results,
    Array.from({ length: 40 }, (_, i) => (i % 4 === 0 ? `n${i}` : `v${i}`)),
  );
});

test('the number of prepared statements stays bounded however many different statements run', async () => {
  for (let i = 0; i < 300; i++) {
    const { rows } = await sql<{ v: number }>`SELECT ${i}::int + ${sql.raw(String(i))} AS v`.execute(handle.db);
    assert.equal(rows[0]!.v, 2 * i);
  }
  const count = await preparedCount();
  assert.ok(count <= 257, `${count} statements prepared`);
  assert.ok(count >= 200, `${count} statements prepared: the cache keeps the recent ones`);
});
