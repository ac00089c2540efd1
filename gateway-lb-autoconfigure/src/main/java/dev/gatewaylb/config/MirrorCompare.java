package dev.gatewaylb.config;

/**
 * The values of {@code mirror.compare}: what of the shadow's answer is held against the
 * primary's.
 */
public enum MirrorCompare {

	/**
	 * Nothing: the shadow's answer is thrown away (counted as a match when it arrives).
	 */
	NONE,

	/**
	 * The status class (2xx, 3xx, 4xx, 5xx).
	 */
	STATUS,

	/**
	 * The status class and a digest of the body, computed as it streams by.
	 */
	BODY

}
