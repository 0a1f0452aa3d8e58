package broker

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Modes of the data directory's entries: its sasl.json holds PLAIN
// passwords and SCRAM salted passwords, enough to log in, and its records
// are the pipeline's data, so only the broker's user may read any of it.
const (
	dataDirMode  fs.FileMode = 0o700
	dataFileMode fs.FileMode = 0o600
)

// secureDataDir creates dir if needed and gives it and everything in it
// owner-only modes. kfake creates its files 0644 and directories 0755;
// dir itself being 0700 keeps those out of reach while the broker runs,
// and Close tightens them again. Symbolic links are left alone.
func secureDataDir(dir string) error {
	if err := os.MkdirAll(dir, dataDirMode); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Chmod(path, dataDirMode)
		case d.Type().IsRegular():
			return os.Chmod(path, dataFileMode)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	return nil
}
