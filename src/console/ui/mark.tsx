/**
 * Intake's mark: signals (three strokes of decreasing length) falling into a tray. Drawn with
 * the theme's colours, so it follows light and dark. The same drawing is the page's favicon
 * (index.html, as a data: URL, which the CSP's img-src allows).
 */
export function Mark({ size = 28 }: { size?: number }) {
  return (
    <svg class="mark" aria-hidden="true" focusable="false" viewBox="0 0 32 32" width={size} height={size}>
      <rect width="32" height="32" rx="8" class="mark-bg" />
      <path d="M9 7v7M16 7v11M23 7v7" class="mark-line" />
      <path d="M7 18v3a4 4 0 0 0 4 4h10a4 4 0 0 0 4-4v-3" class="mark-line" />
    </svg>
  );
}
