#include "tests/support/full_disk_vfs.h"

#include <sqlite3.h>

#include <cstring>
#include <filesystem>

namespace reel::testing {
namespace {

// The live FullDiskVfs (one per process) and the real VFS it wraps.
std::atomic<FullDiskVfs*> g_disk{nullptr};
sqlite3_vfs* g_real = nullptr;

// A file of the wrapping VFS: our header, then the real VFS's file object.
struct File {
  sqlite3_file base;
  sqlite3_file* real;
};

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<File*>(f)->real; }

int Close(sqlite3_file* f) { return Real(f)->pMethods->xClose(Real(f)); }
int Read(sqlite3_file* f, void* out, int n, sqlite3_int64 offset) {
  return Real(f)->pMethods->xRead(Real(f), out, n, offset);
}
int Write(sqlite3_file* f, const void* data, int n, sqlite3_int64 offset) {
  sqlite3_file* real = Real(f);
  sqlite3_int64 size = 0;
  if (real->pMethods->xFileSize(real, &size) != SQLITE_OK) size = 0;
  const int64_t grow = offset + n > size ? offset + n - size : 0;
  FullDiskVfs* disk = g_disk.load();
  if (disk != nullptr && !disk->AllowWrite(grow)) return SQLITE_FULL;
  return real->pMethods->xWrite(real, data, n, offset);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  return Real(f)->pMethods->xTruncate(Real(f), size);
}
int Sync(sqlite3_file* f, int flags) { return Real(f)->pMethods->xSync(Real(f), flags); }
int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  return Real(f)->pMethods->xFileSize(Real(f), size);
}
int Lock(sqlite3_file* f, int level) { return Real(f)->pMethods->xLock(Real(f), level); }
int Unlock(sqlite3_file* f, int level) { return Real(f)->pMethods->xUnlock(Real(f), level); }
int CheckReservedLock(sqlite3_file* f, int* out) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  return Real(f)->pMethods->xFileControl(Real(f), op, arg);
}
int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int DeviceCharacteristics(sqlite3_file* f) {
  return Real(f)->pMethods->xDeviceCharacteristics(Real(f));
}
int ShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  return Real(f)->pMethods->xShmMap(Real(f), region, size, extend, out);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShmUnmap(sqlite3_file* f, int delete_flag) {
  return Real(f)->pMethods->xShmUnmap(Real(f), delete_flag);
}
int Fetch(sqlite3_file* f, sqlite3_int64 offset, int n, void** out) {
  return Real(f)->pMethods->xFetch(Real(f), offset, n, out);
}
int Unfetch(sqlite3_file* f, sqlite3_int64 offset, void* p) {
  return Real(f)->pMethods->xUnfetch(Real(f), offset, p);
}

const sqlite3_io_methods kMethods = {
    3,
    Close,
    Read,
    Write,
    Truncate,
    Sync,
    FileSize,
    Lock,
    Unlock,
    CheckReservedLock,
    FileControl,
    SectorSize,
    DeviceCharacteristics,
    ShmMap,
    ShmLock,
    ShmBarrier,
    ShmUnmap,
    Fetch,
    Unfetch,
};

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
  File* file = reinterpret_cast<File*>(f);
  file->real = reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(f) + sizeof(File));
  const int rc = g_real->xOpen(g_real, name, file->real, flags, out_flags);
  // SQLite calls xClose when pMethods is set, even after a failed open.
  file->base.pMethods = file->real->pMethods != nullptr ? &kMethods : nullptr;
  return rc;
}
int Delete(sqlite3_vfs*, const char* name, int sync_dir) {
  return g_real->xDelete(g_real, name, sync_dir);
}
int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g_real->xAccess(g_real, name, flags, out);
}
int FullPathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return g_real->xFullPathname(g_real, name, n, out);
}

}  // namespace

FullDiskVfs::FullDiskVfs(std::string root) : root_(std::move(root)) {
  FullDiskVfs* none = nullptr;
  g_real = sqlite3_vfs_find("unix");
  if (g_real == nullptr || !g_disk.compare_exchange_strong(none, this)) return;
  vfs_ = new sqlite3_vfs;
  std::memcpy(vfs_, g_real, sizeof(sqlite3_vfs));
  vfs_->zName = "reel-test-full-disk";
  vfs_->szOsFile = static_cast<int>(sizeof(File)) + g_real->szOsFile;
  vfs_->xOpen = Open;
  vfs_->xDelete = Delete;
  vfs_->xAccess = Access;
  vfs_->xFullPathname = FullPathname;
  registered_ = sqlite3_vfs_register(vfs_, /*makeDflt=*/1) == SQLITE_OK;
}

FullDiskVfs::~FullDiskVfs() {
  if (vfs_ == nullptr) return;
  if (registered_) sqlite3_vfs_unregister(vfs_);
  g_disk.store(nullptr);
  delete vfs_;
}

void FullDiskVfs::FillAtWrite(int64_t k) {
  std::lock_guard<std::mutex> lock(mutex_);
  capacity_.reset();
  fill_at_ = k;
  writes_.store(0);
  refused_.store(0);
}

void FullDiskVfs::FillNow() {
  std::lock_guard<std::mutex> lock(mutex_);
  fill_at_.reset();
  capacity_ = Usage();
}

void FullDiskVfs::Empty() {
  std::lock_guard<std::mutex> lock(mutex_);
  capacity_.reset();
  fill_at_.reset();
  writes_.store(0);
  refused_.store(0);
}

int64_t FullDiskVfs::Usage() const {
  int64_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root_, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code size_ec;
    if (!it->is_regular_file(size_ec)) continue;
    const uintmax_t size = it->file_size(size_ec);
    if (!size_ec) total += static_cast<int64_t>(size);
  }
  return total;
}

bool FullDiskVfs::AllowWrite(int64_t grow) {
  const int64_t n = ++writes_;
  std::lock_guard<std::mutex> lock(mutex_);
  if (fill_at_ && n >= *fill_at_ && !capacity_) capacity_ = Usage();
  if (!capacity_ || grow <= 0) return true;
  if (Usage() + grow <= *capacity_) return true;
  ++refused_;
  return false;
}

}  // namespace reel::testing
