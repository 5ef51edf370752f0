/*
 * The simulator-side half of the hexagon runtime: linked with the generated kernels into one
 * static Hexagon executable that runs under qemu-hexagon for as long as its module lives.
 *
 *   argv: <arena fd> <arena bytes>   the device memory, shared with the host process
 *         <hardware threads>         how many threads share the blocks of a parallel kernel
 *   stdin: launch commands           stdout: replies (both a socket to the host)
 *
 * Protocol (little-endian, the host's tvm-backend-hexagon/src/hexagon_simulator.h):
 *   hello  -> {'TVHS', version, guest address of the arena, number of kernels}
 *   launch <- {'TVHL', kernel, grid[3], block[3], nargs, dynamic shared bytes} then nargs 8-byte
 *             argument slots
 *             (buffers: their guest addresses; scalars: their bits)
 *   reply  -> {'TVHR', status, message bytes, 0} then the message (status 0: done)
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define TVM_HEXAGON_PROTOCOL 3   /* 3: the launch header carries dynamic shared bytes */
#define MAGIC_HELLO 0x53485654u  /* "TVHS" */
#define MAGIC_LAUNCH 0x4c485654u /* "TVHL" */
#define MAGIC_REPLY 0x52485654u  /* "TVHR" */
#define MAX_ARGS 256
#define MAX_TEAM 1024

typedef void (*tvm_hexagon_kernel_fn)(const uint64_t*, const int64_t*, const int64_t*, int64_t,
                                      int64_t, int64_t);
/* How a kernel's blocks and threads run (the code generator's choice, by what the kernel uses). */
enum { KERNEL_SERIAL = 0, KERNEL_TEAM = 1, KERNEL_PARALLEL = 2 };
struct tvm_hexagon_kernel {
  const char* name;
  tvm_hexagon_kernel_fn
      fn; /* (args, grid, block, thread in a team or -1, first block, end block) */
  int32_t mode;
};
extern const struct tvm_hexagon_kernel tvm_hexagon_kernels[];
extern const uint32_t tvm_hexagon_num_kernels;

struct launch_header {
  uint32_t magic, kernel;
  int64_t grid[3], block[3];
  uint32_t nargs, dyn_shmem;
};

static pthread_barrier_t team_barrier;

/* A launch's dynamic shared memory: one buffer of its size, which the blocks (run one at a time
 * when a kernel has shared memory) reuse; kept, and grown, from launch to launch. */
unsigned char* tvm_hexagon_dyn_shmem = NULL;
static uint32_t dyn_shmem_bytes = 0;

static const char* reserve_dynamic_shared(uint32_t bytes) {
  if (bytes <= dyn_shmem_bytes) return NULL;
  void* p = NULL;
  if (posix_memalign(&p, 128, bytes) != 0)
    return "cannot allocate the launch's dynamic shared memory";
  free(tvm_hexagon_dyn_shmem);
  tvm_hexagon_dyn_shmem = p;
  dyn_shmem_bytes = bytes;
  return NULL;
}

/* tvm_storage_sync("shared") of a team kernel: every thread of the block meets here. */
void tvm_hexagon_barrier(void) { pthread_barrier_wait(&team_barrier); }

static int read_all(void* buf, size_t n) {
  char* p = buf;
  while (n > 0) {
    ssize_t got = read(0, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return -1;
    p += got;
    n -= (size_t)got;
  }
  return 0;
}

static int write_all(const void* buf, size_t n) {
  const char* p = buf;
  while (n > 0) {
    ssize_t put = write(1, p, n);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return -1;
    p += put;
    n -= (size_t)put;
  }
  return 0;
}

static int reply(int32_t status, const char* message) {
  uint32_t len = (uint32_t)strlen(message);
  uint32_t head[4] = {MAGIC_REPLY, (uint32_t)status, len, 0};
  return write_all(head, sizeof(head)) || write_all(message, len) ? -1 : 0;
}

struct team_member {
  const struct tvm_hexagon_kernel* kernel;
  const uint64_t* args;
  const struct launch_header* head;
  int64_t tid;
  int64_t nblocks;
};

static void* run_member(void* arg) {
  struct team_member* m = arg;
  m->kernel->fn(m->args, m->head->grid, m->head->block, m->tid, 0, m->nblocks);
  return NULL;
}

/* Runs a barrier kernel: one POSIX thread per thread of the block, for every block. */
static void run_team(const struct tvm_hexagon_kernel* k, const uint64_t* args,
                     const struct launch_header* h, int64_t nthreads, int64_t nblocks) {
  static struct team_member members[MAX_TEAM];
  static pthread_t threads[MAX_TEAM];
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 128 * 1024);
  pthread_barrier_init(&team_barrier, NULL, (unsigned)nthreads);
  for (int64_t started = 0; started < nthreads; ++started) {
    members[started] = (struct team_member){k, args, h, started, nblocks};
    if (pthread_create(&threads[started], &attr, run_member, &members[started]) != 0) {
      /* the started threads wait at a barrier that can never fill: end the process, the host
         reports its death */
      fprintf(stderr,
              "hexagon server: cannot start the threads of a block (pthread_create failed; "
              "%lld of %lld threads)\n",
              (long long)started, (long long)nthreads);
      _exit(3);
    }
  }
  for (int64_t i = 0; i < nthreads; ++i) pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&team_barrier);
  pthread_attr_destroy(&attr);
}

/* The workers that share the blocks of a parallel kernel: the DSP's hardware threads. */
static struct {
  pthread_mutex_t mu;
  pthread_cond_t go, done;
  uint64_t generation;
  int pending, size, started;
  const struct tvm_hexagon_kernel* kernel;
  const uint64_t* args;
  const struct launch_header* head;
  int64_t nblocks;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER};

/* Worker w's contiguous share of the blocks. */
static void run_share(int w) {
  int64_t chunk = pool.nblocks / pool.size, extra = pool.nblocks % pool.size;
  int64_t first = w * chunk + (w < extra ? w : extra);
  int64_t end = first + chunk + (w < extra ? 1 : 0);
  if (first < end) pool.kernel->fn(pool.args, pool.head->grid, pool.head->block, -1, first, end);
}

static void* pool_worker(void* arg) {
  int w = (int)(intptr_t)arg;
  uint64_t seen = 0;
  pthread_mutex_lock(&pool.mu);
  for (;;) {
    while (pool.generation == seen) pthread_cond_wait(&pool.go, &pool.mu);
    seen = pool.generation;
    pthread_mutex_unlock(&pool.mu);
    run_share(w);
    pthread_mutex_lock(&pool.mu);
    if (--pool.pending == 0) pthread_cond_signal(&pool.done);
  }
  return NULL;
}

/* Runs the blocks of a kernel without barriers or shared memory on every worker. */
static void run_parallel(const struct tvm_hexagon_kernel* k, const uint64_t* args,
                         const struct launch_header* h, int64_t nblocks) {
  if (nblocks == 1 || pool.size == 1) {
    k->fn(args, h->grid, h->block, -1, 0, nblocks);
    return;
  }
  pthread_mutex_lock(&pool.mu);
  for (; pool.started < pool.size - 1; ++pool.started) { /* this thread is worker 0 */
    pthread_t t;
    if (pthread_create(&t, NULL, pool_worker, (void*)(intptr_t)(pool.started + 1)) != 0) break;
    pthread_detach(t);
  }
  pool.size = pool.started + 1; /* the workers that could start, and this one */
  pool.kernel = k;
  pool.args = args;
  pool.head = h;
  pool.nblocks = nblocks;
  pool.pending = pool.size - 1;
  ++pool.generation;
  pthread_cond_broadcast(&pool.go);
  pthread_mutex_unlock(&pool.mu);
  run_share(0);
  pthread_mutex_lock(&pool.mu);
  while (pool.pending > 0) pthread_cond_wait(&pool.done, &pool.mu);
  pthread_mutex_unlock(&pool.mu);
}

static const char* launch(const struct launch_header* h, const uint64_t* args) {
  if (h->kernel >= tvm_hexagon_num_kernels) return "no such kernel index";
  const struct tvm_hexagon_kernel* k = &tvm_hexagon_kernels[h->kernel];
  int64_t nthreads = h->block[0] * h->block[1] * h->block[2];
  int64_t nblocks = h->grid[0] * h->grid[1] * h->grid[2]; /* the host keeps it below 2^62 */
  if (nthreads <= 0 || nblocks <= 0) return NULL;
  const char* err = reserve_dynamic_shared(h->dyn_shmem);
  if (err != NULL) return err;
  if (k->mode == KERNEL_PARALLEL) {
    run_parallel(k, args, h, nblocks);
  } else if (k->mode == KERNEL_SERIAL) {
    k->fn(args, h->grid, h->block, -1, 0, nblocks);
  } else if (nthreads > MAX_TEAM) {
    return "more threads per block than the simulator runs as a team (1024)";
  } else {
    run_team(k, args, h, nthreads, nblocks);
  }
  return NULL;
}

/* Ends this process once the host process is gone (killed while a kernel runs: the host stops
 * this process otherwise, and a kernel that never ends would keep a CPU busy, orphaned). */
static void* watch_host(void* arg) {
  pid_t host = (pid_t)(intptr_t)arg;
  for (;;) {
    sleep(1);
    if (getppid() != host) _exit(0);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr,
            "usage: %s <arena fd> <arena bytes> <hardware threads> (started by "
            "libtvm_runtime_hexagon)\n",
            argv[0]);
    return 2;
  }
  pool.size = atoi(argv[3]) < 1 ? 1 : atoi(argv[3]);
  int fd = atoi(argv[1]);
  size_t bytes = (size_t)strtoull(argv[2], NULL, 10);
  char* arena = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (arena == MAP_FAILED) {
    fprintf(stderr, "hexagon server: cannot map %zu bytes of device memory: %s\n", bytes,
            strerror(errno));
    return 2;
  }
  close(fd);
  pthread_t watchdog;
  if (pthread_create(&watchdog, NULL, watch_host, (void*)(intptr_t)getppid()) == 0) {
    pthread_detach(watchdog);
  }
  uint32_t hello[4] = {MAGIC_HELLO, TVM_HEXAGON_PROTOCOL, (uint32_t)(uintptr_t)arena,
                       tvm_hexagon_num_kernels};
  if (write_all(hello, sizeof(hello))) return 2;
  static uint64_t args[MAX_ARGS];
  struct launch_header h;
  while (read_all(&h, sizeof(h)) == 0) {
    if (h.magic != MAGIC_LAUNCH || h.nargs > MAX_ARGS) return 2; /* the host never sends this */
    if (read_all(args, h.nargs * sizeof(uint64_t))) return 2;
    const char* err = launch(&h, args);
    if (reply(err ? 1 : 0, err ? err : "")) return 2;
  }
  return 0; /* the host closed the socket: the module was freed */
}
