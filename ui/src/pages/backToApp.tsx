import type { AppPlace } from "../outbound";
import { Link } from "../router";

/** The crumb back to the application (admin) or the portal's start page. */
export function BackToApp({ place }: { place: AppPlace }) {
  return <Link to={place.base}>← {place.portal ? "Endpoints and messages" : place.app.name}</Link>;
}
