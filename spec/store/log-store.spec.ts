/** The log port's contract (./log-store.contract.ts) against every adapter of ./adapters.ts. */
import { LOG_STORE_ADAPTERS } from './adapters';
import { describeLogStoreContract } from './log-store.contract';

describeLogStoreContract(LOG_STORE_ADAPTERS);
