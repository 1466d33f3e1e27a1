import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import ts from 'typescript';
import { sql } from 'kysely';
import { loadConfig } from '../src/platform/config.ts';
import { migrate, openDatabase, type DatabaseHandle } from '../src/platform/db/database.ts';
import { freshDatabaseConfig } from './support/server.ts';

let fresh: Awaited<ReturnType<typeof freshDatabaseConfig>>;
let handle: DatabaseHandle;
before(async () => {
  fresh = await freshDatabaseConfig();
  handle = await openDatabase({ ...loadConfig({}), ...fresh.config }, 'test');
});
after(async () => {
  await handle?.close();
  await fresh?.cleanup();
});

/** Tables and their columns as declared in the checked-in Kysely interface (src/platform/db/schema.ts). */
function declaredTables(): Map<string, string[]> {
  const path = new URL('../src/platform/db/schema.ts', import.meta.url);
  const source = ts.createSourceFile('schema.ts', readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const interfaces = new Map<string, ts.InterfaceDeclaration>();
  source.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node)) interfaces.set(node.name.text, node);
  });
  const names = (decl: ts.InterfaceDeclaration) =>
    decl.members.filter(ts.isPropertySignature).map((m) => (m.name as ts.Identifier).text);
  const tables = new Map<string, string[]>();
  for (const member of interfaces.get('Database')!.members.filter(ts.isPropertySignature)) {
    const typeName = ((member.type as ts.TypeReferenceNode).typeName as ts.Identifier).text;
    tables.set((member.name as ts.Identifier).text, names(interfaces.get(typeName)!).sort());
  }
  return tables;
}

test('migrations apply, are idempotent, and match the checked-in Database interface', async () => {
  const applied = await migrate(handle.db);
  assert.ok(applied.length >= 1);
  assert.deepEqual(await migrate(handle.db), [], 'a second run applies nothing');

  const rows = await sql<{ table_name: string; column_name: string }>`
    SELECT table_name, column_name FROM information_schema.columns
    WHERE table_schema = 'public' AND table_name NOT LIKE 'kysely_%'`.execute(handle.db);
  const actual = new Map<string, string[]>();
  for (const r of rows.rows) actual.set(r.table_name, [...(actual.get(r.table_name) ?? []), r.column_name]);
  for (const [table, columns] of actual) actual.set(table, columns.sort());

  const declared = declaredTables();
  assert.deepEqual([...declared.keys()].sort(), [...actual.keys()].sort(), 'tables');
  for (const [table, columns] of declared) assert.deepEqual(columns, actual.get(table), `columns of ${table}`);
});
