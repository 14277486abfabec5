-- 0018: how a stored version's text was decoded from the device's (or the imported file's) bytes (src/lib/decode.ts).
-- NULL: the bytes were UTF-8 and the text is exactly them. Otherwise the text was converted (UTF-16, a UTF-8 byte-order
-- mark removed) or, for bytes that are not valid UTF-8, read as Windows-1252: the record says so, the web shows it.
ALTER TABLE backups ADD COLUMN source_encoding TEXT CHECK (source_encoding IN ('utf-8-bom', 'utf-16le', 'utf-16be', 'windows-1252'));
