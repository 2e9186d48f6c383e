// esbuild bundles the stylesheet main.tsx imports.
declare module "*.css";
