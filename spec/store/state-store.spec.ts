/** The state port's contract (./state-store.contract.ts) against every adapter of ./adapters.ts. */
import { STATE_STORE_ADAPTERS } from './adapters';
import { describeStateStoreContract } from './state-store.contract';

describeStateStoreContract(STATE_STORE_ADAPTERS);
