import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { guardPoolClients } from '../../../src/console/store/open.js';

test("a PostgreSQL connection's error (a server restart) is heard, not an unhandled 'error' ending the console", () => {
  // Stand-ins for pg's Pool and Client: both are EventEmitters, and an 'error' nobody hears throws.
  const pool = new EventEmitter();
  const held = new EventEmitter();
  assert.throws(() => held.emit('error', new Error('terminating connection due to administrator command')));
  guardPoolClients(pool);
  pool.emit('connect', held);
  assert.doesNotThrow(() => held.emit('error', new Error('terminating connection due to administrator command')));
  assert.doesNotThrow(() => pool.emit('error', new Error('Connection terminated unexpectedly')));
});
