// A disk that fills up under the results database: a SQLite VFS, a test double for the file
// system, registered as the process's default VFS while a FullDiskVfs lives.
//
// It hands every call to the real VFS ("unix") and counts the writes. The "disk" is a folder
// (`root`, the job's folder): what it holds is the sum of the sizes of the regular files under
// it, whoever wrote them (SQLite's database, -wal and -journal files, and Reel's own files). Once
// the disk is full, a SQLite write that would make a file longer fails with SQLITE_FULL, as the
// unix VFS reports ENOSPC; writing over bytes a file already has still works, and deleting or
// truncating a file makes room again, as on a real file system.
//
// The disk fills at the k-th write counted since the VFS was made (FillAtWrite), at once
// (FillNow), or never (Empty: the default). A full disk holds what it held at that moment.
//
// Thread-safe: SQLite calls it from every connection's thread. One at a time per process.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

struct sqlite3_vfs;

namespace reel::testing {

class FullDiskVfs {
 public:
  explicit FullDiskVfs(std::string root);
  ~FullDiskVfs();
  FullDiskVfs(const FullDiskVfs&) = delete;
  FullDiskVfs& operator=(const FullDiskVfs&) = delete;

  bool registered() const { return registered_; }

  // The disk fills at the k-th write from now (1 = the next one).
  void FillAtWrite(int64_t k);
  // The disk is full from now on, holding what it holds now.
  void FillNow();
  // Room for everything again; the write count starts over.
  void Empty();

  int64_t writes() const { return writes_.load(); }    // every xWrite since Empty / FillAtWrite
  int64_t refused() const { return refused_.load(); }  // writes refused as the disk was full
  // Bytes under `root` (regular files, their sizes).
  int64_t Usage() const;

  // Called by the VFS for a write that makes a file `grow` bytes longer: false when the disk is
  // full (the write fails). Counts the write either way.
  bool AllowWrite(int64_t grow);

 private:
  const std::string root_;
  sqlite3_vfs* vfs_ = nullptr;  // owned (a plain struct SQLite keeps a pointer to)
  bool registered_ = false;
  std::mutex mutex_;
  std::optional<int64_t> capacity_;  // bytes; none = room for everything
  std::optional<int64_t> fill_at_;   // the write that fills the disk
  std::atomic<int64_t> writes_{0};
  std::atomic<int64_t> refused_{0};
};

}  // namespace reel::testing
