import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { useIdentity } from "./identity.ts";
import { AuditPage } from "./pages/audit.tsx";
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
  { path: "/services", label: "Services" },
  { path: "/tokens", label: "API tokens" },
  { path: "/settings", label: "Settings" },
  { path: "/audit", label: "Audit log" },
] as const;

function App() {
  const path = usePath();
  const token = useSessionToken();
  const [generation, setGeneration] = useState(0);
  const identity = useIdentity(token, generation);

  // Each page names itself in the title, so tabs and history are readable.
  useEffect(() => {
    const section = path === "/setup" ? "Setup" : NAV.find((n) => n.path !== "/" && path.startsWith(n.path))?.label;
    document.title = section ? `${section} · Intake console` : "Intake console";
  }, [path]);

  if (path === "/setup") return <SetupPage />;
  if (!token) return <SignInPage />;

  const service = /^\/services\/(svc_[0-9a-f]{32})$/.exec(path)?.[1];
  let page = <OverviewPage identity={identity} />;
  if (path === "/services") page = <ServicesPage identity={identity} />;
  else if (service) page = <ServicePage key={service} id={service} identity={identity} />;
  else if (path === "/tokens") page = <TokensPage identity={identity} />;
  else if (path === "/audit") page = <AuditPage identity={identity} />;
  else if (path === "/settings")
    page = <SettingsPage identity={identity} onChanged={() => setGeneration((g) => g + 1)} />;

  return (
    <>
      <header>
        <a
          class="brand"
          href="/console"
          onClick={(e) => {
            e.preventDefault();
            navigate("/");
          }}
        >
          Intake
        </a>
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
              }}
            >
              {item.label}
            </a>
          ))}
        </nav>
        <button type="button" onClick={() => session.signOut("You signed out.")}>
          Sign out
        </button>
      </header>
      {page}
    </>
  );
}

const root = document.getElementById("root");
if (root) render(<App />, root);
