/**
 * What `exec-rx run` does with the signals it gets while a command runs, wherever the command runs:
 * Ctrl-C (SIGINT) interrupts the command and a second one terminates it; SIGTERM and SIGHUP terminate it.
 */

/** Where the signals go: the command's interrupt and terminate (their failures are reported elsewhere). */
export interface SignalTarget {
  interrupt(): Promise<unknown>;
  terminate(): Promise<unknown>;
}

/** The signals this process handles while a command runs. */
export type ForwardedSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

/** Handlers installed by {@link forwardSignals}. */
export interface SignalForwarding {
  /** The last signal received, if any. */
  received(): ForwardedSignal | undefined;
  /** Removes the handlers (the signals' defaults apply again). */
  dispose(): void;
}

/**
 * Installs the handlers on this process until `dispose()`. `onSignal` hears each signal and what was
 * done about it (`interrupt` or `terminate`), e.g. for `--verbose`.
 */
export function forwardSignals(target: SignalTarget, onSignal?: (signal: ForwardedSignal, action: 'interrupt' | 'terminate') => void): SignalForwarding {
  let interrupts = 0;
  let last: ForwardedSignal | undefined;
  const act = (signal: ForwardedSignal, action: 'interrupt' | 'terminate'): void => {
    last = signal;
    onSignal?.(signal, action);
    // A failure here (the connection is gone) is reported by the process's own failure.
    void (action === 'interrupt' ? target.interrupt() : target.terminate()).catch(() => undefined);
  };
  const onInterrupt = (): void => {
    interrupts += 1;
    act('SIGINT', interrupts === 1 ? 'interrupt' : 'terminate');
  };
  const onTerminate = (signal: 'SIGTERM' | 'SIGHUP'): void => act(signal, 'terminate');
  process.on('SIGINT', onInterrupt).on('SIGTERM', onTerminate).on('SIGHUP', onTerminate);
  return {
    received: () => last,
    dispose: () => {
      process.off('SIGINT', onInterrupt).off('SIGTERM', onTerminate).off('SIGHUP', onTerminate);
    },
  };
}
