// SPDX-License-Identifier: Apache-2.0

package broker

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
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
//
// An entry the broker's user does not own (typically dir itself, a volume
// mounted for a container that runs as another user) cannot be changed:
// it keeps its mode, with one warning naming it, and the broker's own
// files and directories in it are still owner-only.
func secureDataDir(dir string, logger *slog.Logger) error {
	if err := os.MkdirAll(dir, dataDirMode); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := dataFileMode
		switch {
		case d.IsDir():
			mode = dataDirMode
		case !d.Type().IsRegular():
			return nil
		}
		if err := chmod(path, mode); err != nil {
			if !errors.Is(err, fs.ErrPermission) {
				return err
			}
			logger.Warn("broker: data dir entry owned by another user keeps its mode; the broker's own files stay owner-only",
				"path", path, "err", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	return nil
}

// chmod is os.Chmod; tests replace it to refuse like a foreign owner.
var chmod = os.Chmod
