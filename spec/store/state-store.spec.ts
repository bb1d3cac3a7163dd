/** The state port's contract (./state-store.contract.ts) against every adapter of ./adapters.ts. */
import { STATE_STORE_ADAPTERS, stopStateRedis } from './adapters';
import { describeStateStoreContract } from './state-store.contract';

// In a describe of its own, so that the redis-server stops before the file's leak check (a root afterAll).
describe('state stores', () => {
  afterAll(stopStateRedis);
  describeStateStoreContract(STATE_STORE_ADAPTERS);
});
