import { render } from "preact";
import { useEffect, useLayoutEffect, useState } from "preact/hooks";
import { Mark, NotFound } from "./components.tsx";
import { useIdentity } from "./identity.ts";
import { AuditPage } from "./pages/audit.tsx";
import { EventPage } from "./pages/event.tsx";
import { EventsPage } from "./pages/events.tsx";
import { IncidentPage } from "./pages/incident.tsx";
import { IncidentsPage } from "./pages/incidents.tsx";
import { OverviewPage } from "./pages/overview.tsx";
import { ServicePage, ServicesPage } from "./pages/services.tsx";
import { SettingsPage } from "./pages/settings.tsx";
import { SetupPage } from "./pages/setup.tsx";
import { SignInPage } from "./pages/sign-in.tsx";
import { TokensPage } from "./pages/tokens.tsx";
import { navigate, usePath } from "./router.ts";
import { session, useSessionToken } from "./session.ts";

const NAV = [
  { path: "/", label: "Overview" },
  { path: "/incidents", label: "Incidents" },
  { path: "/services", label: "Services" },
  { path: "/events", label: "Events" },
  { path: "/tokens", label: "API tokens" },
  { path: "/settings", label: "Settings" },
  { path: "/audit", label: "Audit log" },
] as const;

function App() {
  const path = usePath();
  const token = useSessionToken();
  const [generation, setGeneration] = useState(0);
  const identity = useIdentity(token, generation);

  // Each page names itself in the title, so tabs and history are readable (a layout effect: the
  // not-found page's own effect, which runs after it, titles an unknown path).
  useLayoutEffect(() => {
    const section = path === "/setup" ? "Setup" : NAV.find((n) => n.path !== "/" && path.startsWith(n.path))?.label;
    document.title = section ? `${section} · Intake console` : "Intake console";
  }, [path]);

  if (path === "/setup") return <SetupPage />;
  if (!token) return <SignInPage />;

  const service = /^\/services\/(svc_[0-9a-f]{32})$/.exec(path)?.[1];
  const event = /^\/events\/(evt_[0-9a-f]{32})$/.exec(path)?.[1];
  const incident = /^\/incidents\/(inc_[0-9a-f]{32})$/.exec(path)?.[1];
  let page = <NotFound />;
  if (path === "/") page = <OverviewPage identity={identity} />;
  else if (path === "/services") page = <ServicesPage identity={identity} />;
  else if (service) page = <ServicePage key={service} id={service} identity={identity} />;
  else if (path === "/events") page = <EventsPage />;
  else if (event) page = <EventPage key={event} id={event} />;
  else if (path === "/incidents") page = <IncidentsPage identity={identity} />;
  else if (incident) page = <IncidentPage key={incident} id={incident} identity={identity} />;
  else if (path === "/tokens") page = <TokensPage identity={identity} />;
  else if (path === "/audit") page = <AuditPage identity={identity} />;
  else if (path === "/settings")
    page = <SettingsPage identity={identity} onChanged={() => setGeneration((g) => g + 1)} />;

  return (
    <>
      <Header path={path} />
      {page}
    </>
  );
}

/**
 * The brand and the navigation. On a phone (under 640 px) the links and "Sign out" fold behind
 * a "Menu" button, which opens them as a full-width list; choosing a page closes it.
 */
function Header({ path }: { path: string }) {
  const [open, setOpen] = useState(false);
  useEffect(() => setOpen(false), [path]);
  return (
    <header class={open ? "open" : undefined}>
      <a
        class="brand"
        href="/console"
        onClick={(e) => {
          e.preventDefault();
          navigate("/");
        }}
      >
        <Mark />
        Intake
      </a>
      <button
        type="button"
        class="menu-toggle"
        aria-expanded={open}
        aria-controls="console-menu"
        onClick={() => setOpen(!open)}
      >
        <svg aria-hidden="true" viewBox="0 0 16 16" width="16" height="16">
          <path d={open ? "M3 3l10 10M13 3L3 13" : "M2 4h12M2 8h12M2 12h12"} stroke="currentColor" stroke-width="1.8" />
        </svg>
        Menu
      </button>
      <div class="menu" id="console-menu">
        <nav aria-label="Console">
          {NAV.map((item) => (
            <a
              key={item.path}
              href={`/console${item.path === "/" ? "" : item.path}`}
              aria-current={
                path === item.path || (item.path !== "/" && path.startsWith(item.path)) ? "page" : undefined
              }
              onClick={(e) => {
                e.preventDefault();
                navigate(item.path);
                // Also when it is the page already shown (no path change closes it then).
                setOpen(false);
              }}
            >
              {item.label}
            </a>
          ))}
        </nav>
        <button type="button" onClick={() => session.signOut("You signed out.")}>
          Sign out
        </button>
      </div>
    </header>
  );
}

const root = document.getElementById("root");
if (root) render(<App />, root);
