/**
 * Files dropped anywhere on an element (`dragging` class while files are over it): the drop's files go
 * to `dropped`. Drags that carry no files (text, links) are left alone. Files dropped elsewhere on the
 * page are refused (the browser would otherwise open the file in the tab, leaving the dashboard).
 */

/** Makes `element` take dropped files. */
export function acceptDrops(element: HTMLElement, dropped: (files: File[]) => void): void {
  const carriesFiles = (event: DragEvent): boolean => event.dataTransfer?.types.includes('Files') ?? false;
  const over = (event: DragEvent): void => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    if (event.dataTransfer !== null) event.dataTransfer.dropEffect = 'copy';
    element.classList.add('dragging');
  };
  const refuse = (event: DragEvent): void => {
    if (!carriesFiles(event) || (event.target instanceof Node && element.contains(event.target))) return;
    event.preventDefault();
    if (event.dataTransfer !== null) event.dataTransfer.dropEffect = 'none';
  };
  window.addEventListener('dragover', refuse);
  window.addEventListener('drop', refuse);
  element.addEventListener('dragenter', over);
  element.addEventListener('dragover', over);
  element.addEventListener('dragleave', (event) => {
    // Leaving for a child is no leave.
    if (!(event.relatedTarget instanceof Node) || !element.contains(event.relatedTarget)) element.classList.remove('dragging');
  });
  element.addEventListener('drop', (event) => {
    element.classList.remove('dragging');
    if (!carriesFiles(event)) return;
    event.preventDefault();
    dropped([...(event.dataTransfer?.files ?? [])]);
  });
}
