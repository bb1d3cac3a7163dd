/**
 * Loaded by jest for every spec file (setupFilesAfterEnv): every file, unit or integration, ends by
 * asserting that it left no socket, server, timer or child process behind.
 */
import { expectNoLeakedResources } from './resources';

afterAll(expectNoLeakedResources);
