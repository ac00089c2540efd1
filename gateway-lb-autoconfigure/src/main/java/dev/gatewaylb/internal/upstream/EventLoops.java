package dev.gatewaylb.internal.upstream;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;

/**
 * The event loops of the group the upstream clients run on, numbered, and which of them
 * the current thread is.
 * <p>
 * One instance per group (the gateway's server and its clients share Reactor Netty's
 * loops), so that a thread finds its number in one thread-local read whatever service it
 * sends to.
 */
final class EventLoops {

	/**
	 * Not an event loop of the group.
	 */
	static final int NONE = -1;

	private static final Map<EventLoopGroup, EventLoops> BY_GROUP = new ConcurrentHashMap<>();

	/**
	 * The current thread's number in the group it last looked up: a thread belongs to one
	 * group all its life, so the first scan is the only one.
	 */
	private static final FastThreadLocal<Slot> CURRENT = new FastThreadLocal<>();

	private final EventLoop[] loops;

	private EventLoops(EventLoop[] loops) {
		this.loops = loops;
	}

	/**
	 * Returns the numbered loops of a group. Iterates the group: call it off the event
	 * loops (when a service's upstream is built).
	 * @param group the client's event loop group
	 * @return its loops
	 */
	static EventLoops of(EventLoopGroup group) {
		return BY_GROUP.computeIfAbsent(group, (key) -> {
			List<EventLoop> loops = new ArrayList<>();
			for (EventExecutor executor : key) {
				if (executor instanceof EventLoop loop) {
					loops.add(loop);
				}
			}
			return new EventLoops(loops.toArray(new EventLoop[0]));
		});
	}

	/**
	 * Returns how many loops the group has.
	 * @return the count, at least 0
	 */
	int size() {
		return this.loops.length;
	}

	/**
	 * Returns one loop.
	 * @param index its number
	 * @return the loop
	 */
	EventLoop get(int index) {
		return this.loops[index];
	}

	/**
	 * Returns the number of the loop the current thread runs, or {@link #NONE}.
	 * @return the number
	 */
	int current() {
		Slot slot = CURRENT.getIfExists();
		if (slot != null && slot.loops == this) {
			return slot.index;
		}
		int index = indexOf(Thread.currentThread());
		CURRENT.set(new Slot(this, index));
		return index;
	}

	/**
	 * Returns the number of a loop of the group, or {@link #NONE}.
	 * @param loop the loop, or {@code null}
	 * @return the number
	 */
	int indexOf(EventLoop loop) {
		for (int i = 0; i < this.loops.length; i++) {
			if (this.loops[i] == loop) {
				return i;
			}
		}
		return NONE;
	}

	private int indexOf(Thread thread) {
		for (int i = 0; i < this.loops.length; i++) {
			if (this.loops[i].inEventLoop(thread)) {
				return i;
			}
		}
		return NONE;
	}

	private record Slot(EventLoops loops, int index) {
	}

}
