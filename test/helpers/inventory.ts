// A device inventory CSV for the import tests (web and browser): 500 devices in groups site-a and site-b, credential web-cred.

/** 500 devices; rows 101, 251 and 402 of the file (data rows 100, 250, 401) are bad. */
export function inventory500(): string {
  const lines = ['name,hostname,port,protocol,group,credential,template,enabled,description,schedule'];
  for (let i = 1; i <= 500; i++) {
    const n = String(i).padStart(3, '0');
    let line = `web-${n},10.1.${Math.floor(i / 250)}.${i % 250},,,${i % 2 ? 'site-a' : 'site-b'},web-cred,cisco-ios,,rack ${i},`;
    if (i === 100) line = `web-${n},10.1.0.300,,,site-a,web-cred,cisco-ios,,,`; // address out of range
    if (i === 250) line = `web-${n},10.1.1.0,,,site-z,web-cred,cisco-ios,,,`; // no such group
    if (i === 401) line = `web-001,10.1.1.151,,,site-a,web-cred,cisco-ios,,,`; // the name of row 2
    lines.push(line);
  }
  return lines.join('\n') + '\n';
}
