import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf, publicContextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import {
  createSshCa,
  deleteSshCa,
  getSshCa,
  hostCaPublicKey,
  listCaTemplates,
  listSshCas,
  sshCaKrl,
  sshCaPublicKey,
  updateSshCa,
} from "./ssh-ca.service";
import {
  createSshHost,
  deleteSshHost,
  getSshHost,
  issueHostCertificate,
  listSshHosts,
  updateSshHost,
} from "./ssh-host.service";
import {
  changeSshHostGroupMembership,
  createSshHostGroup,
  deleteSshHostGroup,
  getSshHostGroup,
  listSshHostGroupHosts,
  listSshHostGroups,
  updateSshHostGroup,
} from "./ssh-host-group.service";
import { issueUserCertificate, listLoginHosts } from "./ssh-login.service";
import { issueSshCredentials, listSshCertificates, revokeSshCertificate, signSshKey } from "./ssh-sign.service";
import {
  createSshTemplate,
  deleteSshTemplate,
  getSshTemplate,
  listSshTemplates,
  updateSshTemplate,
} from "./ssh-template.service";

const s = initServer();

/** A public key line, as the file a host or client trusts holds it. */
const keyLine = (line: string) => ({ status: 200 as const, body: line });

export const sshRouter = (deps: AppDeps) =>
  s.router(contract.ssh, {
    createCa: async ({ body, req, res }) => ok(await createSshCa(contextOf(deps, req, res), body)),
    getCa: async ({ params, req, res }) => ok(await getSshCa(contextOf(deps, req, res), params.sshCaId)),
    caPublicKey: async ({ params, req, res }) =>
      keyLine(await sshCaPublicKey(publicContextOf(deps, req, res), params.sshCaId)),
    caKrl: async ({ params, req, res }) => {
      const { krl, version } = await sshCaKrl(publicContextOf(deps, req, res), params.sshCaId);
      res.setHeader("ETag", `"${version}"`);
      res.setHeader("Cache-Control", "no-cache");
      return { status: 200 as const, body: krl };
    },
    updateCa: async ({ params, body, req, res }) =>
      ok(await updateSshCa(contextOf(deps, req, res), params.sshCaId, body)),
    deleteCa: async ({ params, req, res }) => ok(await deleteSshCa(contextOf(deps, req, res), params.sshCaId)),
    caTemplates: async ({ params, req, res }) => ok(await listCaTemplates(contextOf(deps, req, res), params.sshCaId)),
    projectCas: async ({ params, req, res }) => ok(await listSshCas(contextOf(deps, req, res), params.projectId)),
    createTemplate: async ({ body, req, res }) => ok(await createSshTemplate(contextOf(deps, req, res), body)),
    getTemplate: async ({ params, req, res }) =>
      ok(await getSshTemplate(contextOf(deps, req, res), params.certificateTemplateId)),
    updateTemplate: async ({ params, body, req, res }) =>
      ok(await updateSshTemplate(contextOf(deps, req, res), params.certificateTemplateId, body)),
    deleteTemplate: async ({ params, req, res }) =>
      ok(await deleteSshTemplate(contextOf(deps, req, res), params.certificateTemplateId)),
    projectTemplates: async ({ params, req, res }) =>
      ok(await listSshTemplates(contextOf(deps, req, res), params.projectId)),
    sign: async ({ body, req, res }) => ok(await signSshKey(contextOf(deps, req, res), body)),
    issue: async ({ body, req, res }) => ok(await issueSshCredentials(contextOf(deps, req, res), body)),
    revoke: async ({ params, body, req, res }) =>
      ok(await revokeSshCertificate(contextOf(deps, req, res), params.certificateId, body?.reason)),
    projectCertificates: async ({ params, query, req, res }) =>
      ok(await listSshCertificates(contextOf(deps, req, res), params.projectId, query)),
    createHost: async ({ body, req, res }) => ok(await createSshHost(contextOf(deps, req, res), body)),
    loginHosts: async ({ req, res }) => ok(await listLoginHosts(contextOf(deps, req, res))),
    issueUserCert: async ({ params, body, req, res }) =>
      ok(await issueUserCertificate(contextOf(deps, req, res), params.sshHostId, body.loginUser)),
    createHostGroup: async ({ body, req, res }) => ok(await createSshHostGroup(contextOf(deps, req, res), body)),
    getHostGroup: async ({ params, req, res }) =>
      ok(await getSshHostGroup(contextOf(deps, req, res), params.sshHostGroupId)),
    updateHostGroup: async ({ params, body, req, res }) =>
      ok(await updateSshHostGroup(contextOf(deps, req, res), params.sshHostGroupId, body)),
    deleteHostGroup: async ({ params, req, res }) =>
      ok(await deleteSshHostGroup(contextOf(deps, req, res), params.sshHostGroupId)),
    hostGroupHosts: async ({ params, query, req, res }) =>
      ok(await listSshHostGroupHosts(contextOf(deps, req, res), params.sshHostGroupId, query)),
    addHostToGroup: async ({ params, req, res }) =>
      ok(await changeSshHostGroupMembership(contextOf(deps, req, res), params, "add")),
    removeHostFromGroup: async ({ params, req, res }) =>
      ok(await changeSshHostGroupMembership(contextOf(deps, req, res), params, "remove")),
    projectHostGroups: async ({ params, req, res }) =>
      ok(await listSshHostGroups(contextOf(deps, req, res), params.projectId)),
    getHost: async ({ params, req, res }) => ok(await getSshHost(contextOf(deps, req, res), params.sshHostId)),
    updateHost: async ({ params, body, req, res }) =>
      ok(await updateSshHost(contextOf(deps, req, res), params.sshHostId, body)),
    deleteHost: async ({ params, req, res }) => ok(await deleteSshHost(contextOf(deps, req, res), params.sshHostId)),
    issueHostCert: async ({ params, body, req, res }) =>
      ok(await issueHostCertificate(contextOf(deps, req, res), params.sshHostId, body.publicKey)),
    hostUserCaPublicKey: async ({ params, req, res }) =>
      keyLine(await hostCaPublicKey(publicContextOf(deps, req, res), params.sshHostId, "user")),
    hostHostCaPublicKey: async ({ params, req, res }) =>
      keyLine(await hostCaPublicKey(publicContextOf(deps, req, res), params.sshHostId, "host")),
    projectHosts: async ({ params, req, res }) => ok(await listSshHosts(contextOf(deps, req, res), params.projectId)),
  });
