// Turning a listen address into one a client can dial: a server that listens on every interface
// (`:8080`, `8080`, `0.0.0.0:8080`, `[::]:8080`) is reached on loopback from the same machine.
export function dialAddress(listen: string): string {
  const a = listen.trim();
  if (/^\d+$/.test(a)) return `127.0.0.1:${a}`;
  if (/^:\d+$/.test(a)) return `127.0.0.1${a}`;
  if (a.startsWith('0.0.0.0:')) return `127.0.0.1:${a.slice('0.0.0.0:'.length)}`;
  if (a.startsWith('[::]:')) return `[::1]:${a.slice('[::]:'.length)}`;
  return a;
}
