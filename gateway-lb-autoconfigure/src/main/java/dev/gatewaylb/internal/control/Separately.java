package dev.gatewaylb.internal.control;

import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Runs one job's work for each of its items (services, rollouts) separately: what one
 * item throws is logged and the items after it still get their turn, so that one
 * service's broken settings or listener never stops the latency evaluation, the probes or
 * the rollouts of the others.
 * <p>
 * An item that starts failing is logged once at ERROR with its exception, then at DEBUG
 * while it keeps failing, and once at INFO when it works again: a job that runs four
 * times a second must not fill the log. Used from the control thread; the set of failing
 * items is concurrent only so that a test may read it.
 */
public final class Separately {

	private static final System.Logger logger = System.getLogger(Separately.class.getName());

	private final String job;

	private final Set<String> failing = ConcurrentHashMap.newKeySet();

	/**
	 * Creates the runner of one job.
	 * @param job the job's name, for logs
	 */
	public Separately(String job) {
		this.job = Objects.requireNonNull(job, "job");
	}

	/**
	 * Runs {@code action} for every item, each in its own try.
	 * @param <T> the items' type
	 * @param items the items
	 * @param name an item's name, for logs
	 * @param action the work for one item
	 */
	public <T> void forEach(Iterable<? extends T> items, Function<? super T, String> name, Consumer<? super T> action) {
		for (T item : items) {
			String itemName = null;
			try {
				itemName = name.apply(item);
				action.accept(item);
				if (!this.failing.isEmpty() && this.failing.remove(itemName)) {
					logger.log(System.Logger.Level.INFO,
							"gateway-lb control " + this.job + " works again for " + itemName);
				}
			}
			catch (Throwable ex) {
				String key = String.valueOf(itemName);
				if (this.failing.add(key)) {
					logger.log(System.Logger.Level.ERROR, "gateway-lb control " + this.job + " failed for " + key
							+ "; the others go on, and this one is tried again at the next run", ex);
				}
				else {
					logger.log(System.Logger.Level.DEBUG, "gateway-lb control " + this.job + " still fails for " + key,
							ex);
				}
			}
		}
	}

	/**
	 * Returns whether an item failed at its last turn.
	 * @param itemName the item's name
	 * @return whether failing
	 */
	public boolean isFailing(String itemName) {
		return this.failing.contains(itemName);
	}

}
