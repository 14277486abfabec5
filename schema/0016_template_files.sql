-- Custom templates loaded from YAML files in <data_dir>/templates/ (issue #13). A file template is read-only through
-- the API and web interface: the file is the source, a reload (`confvault template reload`, SIGHUP to serve, start)
-- writes it here. source_file is the file's absolute path; NULL for built-ins and templates made through the API.
ALTER TABLE templates ADD COLUMN source_file TEXT;

-- What the last reload of the template folder could not load: one row per file, its field errors as JSON
-- ([{"field","message"}]). Replaced as a whole by each reload; the Templates page lists it.
CREATE TABLE template_file_problems (
  path        TEXT PRIMARY KEY,
  errors      TEXT NOT NULL CHECK (json_valid(errors)),
  reported_at INTEGER NOT NULL
) STRICT;
