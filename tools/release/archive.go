// SPDX-License-Identifier: Apache-2.0

package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// entry is one file or directory of an archive or image layer.
type entry struct {
	name string // slash path inside the archive; directories end in "/"
	src  string // the file on disk; empty for a directory
	mode int64  // 0755 for directories and executables, 0644 otherwise
}

// walk lists dir's files and directories as entries under prefix (a
// slash path, "" for the archive's root), sorted by name. A file is
// executable in the archive when any execute bit is set on disk.
func walk(dir, prefix string) ([]entry, error) {
	var out []entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := path.Join(prefix, filepath.ToSlash(rel))
		switch {
		case d.IsDir():
			if name != "." && name != "" {
				out = append(out, entry{name: name + "/", mode: 0o755})
			}
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			mode := int64(0o644)
			if info.Mode()&0o111 != 0 {
				mode = 0o755
			}
			out = append(out, entry{name: name, src: p, mode: mode})
		default:
			return fmt.Errorf("%s: neither a file nor a directory", p)
		}
		return nil
	})
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return out, err
}

// writeArchive packs dir under its base name into out, a .tar.gz or a
// .zip, every entry dated when.
func writeArchive(out, dir string, when time.Time) error {
	entries, err := walk(dir, filepath.Base(dir))
	if err != nil {
		return err
	}
	var write func(io.Writer, []entry, time.Time) error
	switch {
	case strings.HasSuffix(out, ".tar.gz"):
		write = writeTarGz
	case strings.HasSuffix(out, ".zip"):
		write = writeZip
	default:
		return fmt.Errorf("%s: want a .tar.gz or .zip name", out)
	}
	return writeFile(out, func(w io.Writer) error { return write(w, entries, when) })
}

// writeFile creates path and writes it with fill through a buffer.
func writeFile(path string, fill func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := fill(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeTarGz writes entries as a gzip-compressed tar: the gzip header
// carries no name and no time.
func writeTarGz(w io.Writer, entries []entry, when time.Time) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	if err := writeTar(zw, entries, when); err != nil {
		return err
	}
	return zw.Close()
}

// writeTar writes entries as a PAX tar owned by 0:0, every time when.
func writeTar(w io.Writer, entries []entry, when time.Time) error {
	files := make([]layerFile, len(entries))
	for i, e := range entries {
		files[i] = layerFile{entry: e}
	}
	return writeLayer(w, files, when)
}

// writeLayer writes files as a PAX tar, each with its owner, every time
// when.
func writeLayer(w io.Writer, files []layerFile, when time.Time) error {
	tw := tar.NewWriter(w)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, Uid: f.uid, Gid: f.gid, ModTime: when, Format: tar.FormatPAX, Typeflag: tar.TypeDir}
		if f.src != "" {
			info, err := os.Stat(f.src)
			if err != nil {
				return err
			}
			h.Typeflag, h.Size = tar.TypeReg, info.Size()
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if err := copyFile(tw, f.src); err != nil {
			return err
		}
	}
	return tw.Close()
}

// writeZip writes entries as a deflated zip, every time when.
func writeZip(w io.Writer, entries []entry, when time.Time) error {
	zw := zip.NewWriter(w)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: when}
		h.SetMode(fs.FileMode(e.mode))
		if e.src == "" {
			h.SetMode(fs.ModeDir | fs.FileMode(e.mode))
			h.Method = zip.Store
		}
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if err := copyFile(fw, e.src); err != nil {
			return err
		}
	}
	return zw.Close()
}

// copyFile copies the file src to w; nothing when src is empty.
func copyFile(w io.Writer, src string) error {
	if src == "" {
		return nil
	}
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// sumsFile is the checksum file's name, the format sha256sum -c reads.
const sumsFile = "SHA256SUMS"

// writeSums writes dir/SHA256SUMS: the SHA-256 of every other regular
// file of dir (not its subdirectories), sorted by name.
func writeSums(dir string) error {
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, de := range des {
		if !de.Type().IsRegular() || de.Name() == sumsFile {
			continue
		}
		h := sha256.New()
		if err := copyFile(h, filepath.Join(dir, de.Name())); err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), de.Name())
	}
	return os.WriteFile(filepath.Join(dir, sumsFile), []byte(b.String()), 0o644)
}
