/** A history the host's metrics watch: each append is counted before it is made (a plain delegate: appends are the hot path). */
import type { HistoryInput, OutputHistory } from '../../exec/output-history';

/** `history`, telling `seen` of each append before it is made (a plain delegate: appends are the hot path). */
export function observed(history: OutputHistory, seen: (event: HistoryInput) => void): OutputHistory {
  const ready = history.ready;
  const discard = history.discard;
  return {
    get historyStartSeq() {
      return history.historyStartSeq;
    },
    get retainedEvents() {
      return history.retainedEvents;
    },
    get retainedBytes() {
      return history.retainedBytes;
    },
    get subscriberCount() {
      return history.subscriberCount;
    },
    eventsAfter$: (afterSeq) => history.eventsAfter$(afterSeq),
    append: (event) => {
      seen(event);
      history.append(event);
    },
    release: () => history.release(),
    ...(ready === undefined ? {} : { ready: () => ready.call(history) }),
    ...(discard === undefined ? {} : { discard: () => discard.call(history) }),
  };
}
