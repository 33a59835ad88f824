import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { isPortalPath, PortalApp } from "./pages/Portal";

// The consumer portal is its own app on the same bundle: no login, no admin shell (ui/src/pages/Portal.tsx).
const portal = isPortalPath(location.pathname);

createRoot(document.getElementById("root")!).render(<StrictMode>{portal ? <PortalApp /> : <App />}</StrictMode>);
