/** A request body for `fetch` streamed without a Content-Length (chunked): `chunk` again and again until at least `total` bytes went. */
export function repeatedBody(total: number, chunk: Uint8Array): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= total) return controller.close();
      sent += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
}
