// Channel: one datagram per message, a passed descriptor arrives usable
// (a segment mapped through it is the same memory), a receive times out
// when nothing comes, and a peer that is gone reads as kCancelled (how a
// worker's death is seen), after the messages it sent before it went.
//
// Thread-safety: each test owns its objects.
#include "worker/channel.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "worker/proto/worker.pb.h"
#include "worker/segment.h"

namespace hflow {
namespace worker {
namespace {

TEST(ChannelTest, MessagesKeepTheirBoundariesAndCarryADescriptor) {
  Channel host;
  int child_fd = -1;
  ASSERT_TRUE(Channel::Pair(&host, &child_fd).ok());
  Channel child(child_fd);
  std::shared_ptr<Segment> seg;
  ASSERT_TRUE(Segment::Create("channel-test", 4096, &seg).ok());
  seg->base()[10] = 42;
  v1::HostMessage a;
  a.set_id(1);
  a.mutable_proc()->set_trans(7);
  v1::HostMessage b;
  b.set_id(2);
  ASSERT_TRUE(host.Send(a, seg->fd()).ok());
  ASSERT_TRUE(host.Send(b).ok());
  v1::HostMessage got;
  int fd = -1;
  ASSERT_TRUE(child.Recv(&got, 1000, &fd).ok());
  EXPECT_EQ(got.id(), 1u);
  EXPECT_EQ(got.proc().trans(), 7u);
  ASSERT_GE(fd, 0);
  std::shared_ptr<Segment> mapped;
  ASSERT_TRUE(Segment::Map(fd, 4096, &mapped).ok());
  EXPECT_EQ(mapped->base()[10], 42);  // the same memory
  ASSERT_TRUE(child.Recv(&got, 1000, &fd).ok());
  EXPECT_EQ(got.id(), 2u);
  EXPECT_EQ(fd, -1);
}

TEST(ChannelTest, NothingSentTimesOutAndAGonePeerIsCancelled) {
  Channel host;
  int child_fd = -1;
  ASSERT_TRUE(Channel::Pair(&host, &child_fd).ok());
  v1::WorkerMessage got;
  EXPECT_TRUE(host.Recv(&got, 10).IsTimeout());
  close(child_fd);  // as a worker's death closes its end
  Status s = host.Recv(&got, 1000);
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.ToString();
}

// Note [A reset before the last messages]: a peer that goes with our
// message unread (a worker dying while the host's next batch waits) must
// not take the messages it sent before with it.
TEST(ChannelTest, APeerGoneWithOurMessageUnreadLeavesItsMessagesReadable) {
  Channel host;
  int child_fd = -1;
  ASSERT_TRUE(Channel::Pair(&host, &child_fd).ok());
  {
    Channel child(child_fd);
    for (uint64_t id : {18, 19}) {
      v1::WorkerMessage reply;
      reply.set_id(id);
      ASSERT_TRUE(child.Send(reply).ok());
    }
    v1::HostMessage next;
    next.set_id(20);
    ASSERT_TRUE(host.Send(next).ok());  // never read: the child goes
  }
  v1::WorkerMessage got;
  for (uint64_t id : {18, 19}) {
    Status s = host.Recv(&got, 1000);
    ASSERT_TRUE(s.ok()) << "reply " << id << ": " << s.ToString();
    EXPECT_EQ(got.id(), id);
  }
  Status s = host.Recv(&got, 1000);
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.ToString();
}

}  // namespace
}  // namespace worker
}  // namespace hflow
