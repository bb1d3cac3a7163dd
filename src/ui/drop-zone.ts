/**
 * Files dropped anywhere on an element (`dragging` class while files are over it): the drop's files go
 * to `dropped`. Drags that carry no files (text, links) are left alone.
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
