/** Inline SVG icons (no icon font, no CDN). */
const paths: Record<string, string> = {
  dashboard: "M3 13h8V3H3zm0 8h8v-6H3zm10 0h8V11h-8zm0-18v6h8V3z",
  sources: "M12 3v12m0 0-4-4m4 4 4-4M4 17v3h16v-3",
  events: "M4 6h16M4 12h16M4 18h10",
  destinations: "M5 12h12m0 0-4-4m4 4-4 4M20 4v16",
  connections: "M7 7a3 3 0 1 0 0 .01M17 17a3 3 0 1 0 0 .01M9 9l6 6",
  attempts: "M4 12a8 8 0 1 0 3-6.2M4 4v4h4",
  replay: "M4 4v6h6M5.5 15a8 8 0 1 0 1.8-8.3L4 10",
  topics: "M4 5h16v10H8l-4 4zM8 9h8M8 12h5",
  eventTypes: "M4 4h7l9 9-7 7-9-9zM8 8h.01",
  collections: "M4 6c0-1.7 3.6-3 8-3s8 1.3 8 3-3.6 3-8 3-8-1.3-8-3zm0 0v12c0 1.7 3.6 3 8 3s8-1.3 8-3V6M4 12c0 1.7 3.6 3 8 3s8-1.3 8-3",
  issues: "M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18zM12 8v5M12 16v.01",
  alerts: "M6 16V11a6 6 0 1 1 12 0v5l2 2H4zM10 20a2 2 0 0 0 4 0",
  channels: "M4 5h16v11H9l-5 4zM8 9h8M8 12h6",
  applications: "M4 4h16v5H4zM4 13h7v7H4zM15 13h5v7h-5zM12 9v4",
  keys: "M11 12a4 4 0 1 1-8 0 4 4 0 0 1 8 0zM11 12h10M17 12v3M20 12v3",
  environments: "M4 7l8-4 8 4-8 4zM4 12l8 4 8-4M4 17l8 4 8-4",
  members: "M9 11a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM2 21v-1a6 6 0 0 1 6-6h2a6 6 0 0 1 6 6v1M16 3.5a4 4 0 0 1 0 7.5M22 21v-1a6 6 0 0 0-4-5.6",
  audit: "M6 3h9l4 4v14H6zM14 3v5h5M9 12h7M9 16h5",
  menu: "M4 6h16M4 12h16M4 18h16",
  logout: "M15 4h4v16h-4M10 8l-4 4 4 4M6 12h10",
  warning: "M12 3 2 20h20L12 3zM12 10v4M12 17v.01",
};

export function Icon({ name, size = 18 }: { name: keyof typeof paths | string; size?: number }) {
  return (
    <svg width={size} height={size} viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true" focusable="false">
      <path d={paths[name] ?? ""} />
    </svg>
  );
}
