/**
 * Types for image-files.mjs, which runs under plain node in the image build
 * (deploy/Dockerfile, stage image-files): the paths, relative to `root`, a
 * runtime image of `service` needs (the workspace packages' shipped files,
 * third-party package folders, the node_modules links to workspace packages),
 * and the package names reached, the service first.
 */
export function imageFiles(root: string, service: string): { packages: string[]; paths: string[] };
