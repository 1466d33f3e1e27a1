/**
 * PASSWORD_HASH_COST: the cost of new password hashes (log2 of scrypt's N). The test servers lower
 * it to 10 (test/support/server.ts); this file checks the setting's bounds, that a hash names the
 * cost it was made with, and that a hash made at a lower cost than the process's is rehashed.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { ConfigError, loadConfig } from '../src/platform/config.ts';
import { hashPassword, needsRehash, passwordHashCost, setPasswordHashCost, verifyPassword } from '../src/sign-in/password-hash.ts';

const before = passwordHashCost();
after(() => setPasswordHashCost(before));

test('PASSWORD_HASH_COST is 15 by default, 10 to 20, refused otherwise', () => {
  assert.equal(loadConfig({}).passwordHashCost, 15);
  assert.equal(loadConfig({ PASSWORD_HASH_COST: '10' }).passwordHashCost, 10);
  assert.equal(loadConfig({ PASSWORD_HASH_COST: '20' }).passwordHashCost, 20);
  for (const bad of ['9', '21', '12.5', 'high']) {
    assert.throws(() => loadConfig({ PASSWORD_HASH_COST: bad }), (err: unknown) => err instanceof ConfigError && /PASSWORD_HASH_COST/.test(err.message), bad);
  }
  assert.throws(() => setPasswordHashCost(9), RangeError);
  assert.throws(() => setPasswordHashCost(21), RangeError);
});

test('a hash names its cost, verifies at any later cost, and is rehashed when made cheaper than today', async () => {
  setPasswordHashCost(11);
  const cheap = await hashPassword('correct horse battery staple');
  assert.match(cheap, /^scrypt\$2048\$8\$1\$[\w-]+\$[\w-]+$/);
  assert.equal(needsRehash(cheap), false);
  assert.equal(await verifyPassword('correct horse battery staple', cheap), true);
  assert.equal(await verifyPassword('correct horse battery stapler', cheap), false);

  setPasswordHashCost(15);
  assert.equal(passwordHashCost(), 15);
  assert.equal(await verifyPassword('correct horse battery staple', cheap), true, 'an older, cheaper hash still verifies');
  assert.equal(needsRehash(cheap), true, 'and is replaced at the next sign-in');
  const strong = await hashPassword('correct horse battery staple');
  assert.match(strong, /^scrypt\$32768\$8\$1\$/);
  assert.equal(needsRehash(strong), false);
});
