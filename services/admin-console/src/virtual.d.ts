// The onboarding page's stylesheet as a file of the build (vite.config.ts): its URL.
declare module 'virtual:onboarding-page-stylesheet' {
  const url: string;
  // eslint-disable-next-line no-restricted-syntax
  export default url;
}
