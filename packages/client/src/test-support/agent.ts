import { type AgentInfraClient, createClient } from '../index.js';
import { BRIDGE_KEY } from './serve.js';

/** A bridge-key client of `url` and a device-key client of a newly created agent `agentId`. */
export async function seedAgent(url: string, agentId: string): Promise<{ bridge: AgentInfraClient; agent: AgentInfraClient; key: string }> {
  const bridge = createClient({ url, key: BRIDGE_KEY });
  await bridge.identity.agents.create({ agent_id: agentId, display_name: agentId });
  const { device_key } = await bridge.identity.device.issue({ agent_id: agentId, label: 'client-test' });
  return { bridge, agent: createClient({ url, key: device_key }), key: device_key };
}
