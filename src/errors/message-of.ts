/** What an error says, for a log line or an answer: an Error's message, else the value as text. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
