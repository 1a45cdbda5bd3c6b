/** The console's pages: the server answers index.html at each (src/http/console.ts lists the same). */
export const PAGES = {
  overview: '/',
  signIn: '/sign-in/',
  account: '/account/',
  alerts: '/alerts/',
  alert: '/alerts/:id/',
  leaks: '/leaks/',
  monitors: '/monitors/',
  monitor: '/monitors/:id/',
  incidents: '/incidents/',
  incident: '/incidents/:id/',
  tokens: '/tokens/',
  token: '/tokens/:id/',
  sources: '/sources/',
  feeds: '/feeds/',
  integrations: '/integrations/',
  admin: '/admin/',
} as const;
