#include "tests/fuzz/difffuzz/Isolation.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstring>
#include <string>

#include "ir/Error.h"

namespace tessera::fuzz {

namespace {

// The outcome as length-prefixed strings, through the pipe.
void putString(std::string& out, const std::string& s) {
  const uint64_t n = s.size();
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out += s;
}
bool getString(const std::string& in, size_t& pos, std::string& s) {
  uint64_t n = 0;
  if (pos + sizeof n > in.size()) return false;
  std::memcpy(&n, in.data() + pos, sizeof n);
  pos += sizeof n;
  if (pos + n > in.size()) return false;
  s = in.substr(pos, n);
  pos += n;
  return true;
}

std::string serialize(const Outcome& o) {
  std::string out;
  putString(out, o.invalid ? "1" : "0");
  putString(out, o.invalidReason);
  putString(out, o.specializedIR);
  for (const Finding& f : o.findings) {
    putString(out, f.where);
    putString(out, f.what);
    putString(out, f.detail);
  }
  return out;
}

bool deserialize(const std::string& in, Outcome& o) {
  size_t pos = 0;
  std::string invalid;
  if (!getString(in, pos, invalid) || !getString(in, pos, o.invalidReason) || !getString(in, pos, o.specializedIR))
    return false;
  o.invalid = invalid == "1";
  while (pos < in.size()) {
    Finding f;
    if (!getString(in, pos, f.where) || !getString(in, pos, f.what) || !getString(in, pos, f.detail)) return false;
    o.findings.push_back(std::move(f));
  }
  return true;
}

// Reads both pipes to their ends (the child may fill either).
void drain(int outFd, int errFd, std::string& out, std::string& err) {
  pollfd fds[2] = {{outFd, POLLIN, 0}, {errFd, POLLIN, 0}};
  std::string* into[2] = {&out, &err};
  int open = 2;
  char buffer[65536];
  while (open > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        into[i]->append(buffer, static_cast<size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
}

std::string lastLine(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  const size_t nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

}  // namespace

Outcome checkInChildProcess(const std::function<Outcome()>& check) {
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) throw Error(std::string("fuzz: pipe: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) throw Error(std::string("fuzz: fork: ") + std::strerror(errno));
  if (pid == 0) {
    close(out[0]);
    close(err[0]);
    dup2(err[1], STDERR_FILENO);
    std::string bytes;
    try {
      bytes = serialize(check());
    } catch (const std::exception& e) {
      Outcome o;
      o.findings.push_back({"process", "error", e.what()});
      bytes = serialize(o);
    }
    for (size_t done = 0; done < bytes.size();) {
      const ssize_t n = write(out[1], bytes.data() + done, bytes.size() - done);
      if (n <= 0) _exit(3);
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(out[1]);
  close(err[1]);
  std::string bytes, errors;
  drain(out[0], err[0], bytes, errors);
  int status = 0;
  waitpid(pid, &status, 0);
  Outcome o;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && deserialize(bytes, o)) return o;
  // LLVM prints what failed on the line starting "LLVM ERROR" (then the node and the function); else the last line.
  const size_t llvm = errors.find("LLVM ERROR");
  std::string why = llvm != std::string::npos ? errors.substr(llvm, errors.find('\n', llvm) - llvm) : lastLine(errors);
  if (!why.empty()) why += " ";
  if (WIFSIGNALED(status)) why += std::string("(killed by ") + strsignal(WTERMSIG(status)) + ")";
  else why += "(exit status " + std::to_string(WEXITSTATUS(status)) + ")";
  o.findings.push_back({"process", "crash", why});
  return o;
}

}  // namespace tessera::fuzz
