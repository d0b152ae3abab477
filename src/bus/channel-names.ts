// Channel names under REDIS_PREFIX. In a cluster each org's channel carries the org id as its hash tag ({…}), so the
// channel lives on the shard that holds the org's keys; one Redis keeps the names it always had.
export interface ChannelNames {
  org(orgId: string): string;
  control: string;
}

export function standaloneChannelNames(prefix: string): ChannelNames {
  return { org: (orgId) => `${prefix}org:${orgId}`, control: `${prefix}control` };
}

export function clusterChannelNames(prefix: string): ChannelNames {
  return { org: (orgId) => `${prefix}{${orgId}}:events`, control: `${prefix}{control}` };
}
