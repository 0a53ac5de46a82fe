//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock (flock) on path+".lock", the
// guard of "one process per file", and returns the function that
// releases it. The lock dies with the process, so a killed gateway never
// leaves it behind.
func lockFile(path string) (unlock func() error, err error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s.lock is held)", ErrInUse, path)
		}
		return nil, fmt.Errorf("locking %s.lock: %w", path, err)
	}
	return f.Close, nil
}
